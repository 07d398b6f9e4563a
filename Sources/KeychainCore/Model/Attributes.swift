import FoundationEssentials

/// The attributes of a keychain item, or the attributes a query names.
///
/// Every attribute is optional. In an item, a missing identity attribute is stored as its
/// empty value (no access group, not synchronizable...). In a query, a missing attribute is a
/// wildcard and a present one must match exactly.
public struct Attributes: Sendable, Hashable, CustomReflectable {
    /// The values, held once and shared by copies until one of them changes (copy on write):
    /// an item moves through a read in several copies, and a struct of twenty-three fields,
    /// strings and data among them, retained and released each of them on every copy, for
    /// every listed item (keychain-bench's `allKeys()` row measures a listing).
    private final class Storage: @unchecked Sendable {
        // Mutated only while uniquely referenced (``unique()``), so never while shared.
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    struct Fields: Hashable {
        var service: String?
        var account: String?
        var accountIsData: Bool?
        var accessGroup: String?
        var synchronizable: Bool?
        var server: String?
        var `protocol`: InternetProtocol?
        var authenticationType: AuthenticationType?
        var port: Int?
        var path: String?
        var securityDomain: String?
        var accessibility: Accessibility?
        var accessControl: AccessControl?
        var label: String?
        var comment: String?
        var description: String?
        var generic: Data?
        var creator: UInt32?
        var type: UInt32?
        var isInvisible: Bool?
        var isNegative: Bool?
        var creationDate: Date?
        var modificationDate: Date?
    }

    private var storage: Storage

    /// The storage, copied first when another `Attributes` shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    public static func == (lhs: Attributes, rhs: Attributes) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }

    /// Printed and dumped as the fields it holds, as the plain struct it was, not as its storage.
    public var customMirror: Mirror {
        Mirror(self, children: Mirror(reflecting: storage.fields).children, displayStyle: .struct)
    }
    // Identity of a generic password (with the class): access group, service, account, synchronizable.
    /// The service of a generic password (`kSecAttrService`).
    public var service: String? {
        get { storage.fields.service }
        set { unique().fields.service = newValue }
    }
    /// The account (`kSecAttrAccount`).
    public var account: String? {
        get { storage.fields.account }
        set { unique().fields.account = newValue }
    }
    /// Whether the account was given as bytes (`CFData`, as SwiftKeychainWrapper gives it)
    /// rather than text. The `Security` face hands it back in the form it was given, as
    /// Apple's keychain does; it is not part of the identity (text and its UTF-8 bytes name
    /// the same item).
    public var accountIsData: Bool? {
        get { storage.fields.accountIsData }
        set { unique().fields.accountIsData = newValue }
    }
    /// The access group (`kSecAttrAccessGroup`): a namespace shared by the programs that name it.
    public var accessGroup: String? {
        get { storage.fields.accessGroup }
        set { unique().fields.accessGroup = newValue }
    }
    /// Whether the item is synchronizable (`kSecAttrSynchronizable`): an iCloud valet's.
    public var synchronizable: Bool? {
        get { storage.fields.synchronizable }
        set { unique().fields.synchronizable = newValue }
    }
    // Identity of an internet password adds these (and drops service).
    /// The server of an internet password (`kSecAttrServer`).
    public var server: String? {
        get { storage.fields.server }
        set { unique().fields.server = newValue }
    }
    /// The protocol of an internet password (`kSecAttrProtocol`).
    public var `protocol`: InternetProtocol? {
        get { storage.fields.`protocol` }
        set { unique().fields.`protocol` = newValue }
    }
    /// The authentication scheme of an internet password (`kSecAttrAuthenticationType`).
    public var authenticationType: AuthenticationType? {
        get { storage.fields.authenticationType }
        set { unique().fields.authenticationType = newValue }
    }
    /// The port of an internet password (`kSecAttrPort`).
    public var port: Int? {
        get { storage.fields.port }
        set { unique().fields.port = newValue }
    }
    /// The path of an internet password (`kSecAttrPath`).
    public var path: String? {
        get { storage.fields.path }
        set { unique().fields.path = newValue }
    }
    /// The security domain of an internet password, such as an HTTP realm (`kSecAttrSecurityDomain`).
    public var securityDomain: String? {
        get { storage.fields.securityDomain }
        set { unique().fields.securityDomain = newValue }
    }
    /// When the item can be read.
    public var accessibility: Accessibility? {
        get { storage.fields.accessibility }
        set { unique().fields.accessibility = newValue }
    }
    /// What a read must prove (user presence...); nil for none. Only the vault honours it.
    public var accessControl: AccessControl? {
        get { storage.fields.accessControl }
        set { unique().fields.accessControl = newValue }
    }
    // Descriptive attributes.
    /// The label keychain browsers show (`kSecAttrLabel`).
    public var label: String? {
        get { storage.fields.label }
        set { unique().fields.label = newValue }
    }
    /// A comment (`kSecAttrComment`).
    public var comment: String? {
        get { storage.fields.comment }
        set { unique().fields.comment = newValue }
    }
    /// A description of the item's kind (`kSecAttrDescription`).
    public var description: String? {
        get { storage.fields.description }
        set { unique().fields.description = newValue }
    }
    /// Generic data kept with the item (`kSecAttrGeneric`), encrypted like every attribute.
    public var generic: Data? {
        get { storage.fields.generic }
        set { unique().fields.generic = newValue }
    }
    /// A creator code (`kSecAttrCreator`).
    public var creator: UInt32? {
        get { storage.fields.creator }
        set { unique().fields.creator = newValue }
    }
    /// A type code (`kSecAttrType`).
    public var type: UInt32? {
        get { storage.fields.type }
        set { unique().fields.type = newValue }
    }
    /// Whether keychain browsers hide the item (`kSecAttrIsInvisible`).
    public var isInvisible: Bool? {
        get { storage.fields.isInvisible }
        set { unique().fields.isInvisible = newValue }
    }
    /// Whether the item is a negative entry, a password the user chose not to store (`kSecAttrIsNegative`).
    public var isNegative: Bool? {
        get { storage.fields.isNegative }
        set { unique().fields.isNegative = newValue }
    }
    /// Set by the store; ignored when adding or updating.
    public var creationDate: Date? {
        get { storage.fields.creationDate }
        set { unique().fields.creationDate = newValue }
    }
    /// Set by the store; ignored when adding or updating.
    public var modificationDate: Date? {
        get { storage.fields.modificationDate }
        set { unique().fields.modificationDate = newValue }
    }

    /// Attributes with the given values; every one left out is nil (absent, or a wildcard in a query).
    public init(
        service: String? = nil, account: String? = nil, accessGroup: String? = nil, synchronizable: Bool? = nil,
        server: String? = nil, protocol: InternetProtocol? = nil, authenticationType: AuthenticationType? = nil,
        port: Int? = nil, path: String? = nil, securityDomain: String? = nil,
        accessibility: Accessibility? = nil,
        label: String? = nil, comment: String? = nil, description: String? = nil, generic: Data? = nil,
        creator: UInt32? = nil, type: UInt32? = nil, isInvisible: Bool? = nil, isNegative: Bool? = nil,
        accessControl: AccessControl? = nil
    ) {
        storage = Storage(
            Fields(
                service: service, account: account, accountIsData: nil, accessGroup: accessGroup, synchronizable: synchronizable,
                server: server, protocol: `protocol`, authenticationType: authenticationType, port: port, path: path,
                securityDomain: securityDomain, accessibility: accessibility, accessControl: accessControl,
                label: label, comment: comment, description: description, generic: generic,
                creator: creator, type: type, isInvisible: isInvisible, isNegative: isNegative,
                creationDate: nil, modificationDate: nil))
    }

    /// Attributes set in `other` replace those here; those it leaves nil are kept.
    public func merging(_ other: Attributes) -> Attributes {
        var merged = self
        for field in AttributeField.allCases where field.isSet(in: other) {
            field.copy(from: other, to: &merged)
        }
        return merged
    }

    /// Whether every attribute set in `query` is set here to the same value.
    /// Identity attributes left empty in an item match their empty value in a query.
    public func matches(_ query: Attributes, itemClass: ItemClass) -> Bool {
        let normalized = self.normalizedIdentity(for: itemClass)
        for field in AttributeField.allCases where field != .creationDate && field != .modificationDate && field.isSet(in: query) {
            if !field.equal(normalized, query) { return false }
        }
        return true
    }

    /// Identity attributes filled with their empty values, as the store keeps them.
    func normalizedIdentity(for itemClass: ItemClass) -> Attributes {
        var copy = self
        copy.accessGroup = accessGroup ?? ""
        copy.account = account ?? ""
        copy.synchronizable = synchronizable ?? false
        switch itemClass {
        case .genericPassword:
            copy.service = service ?? ""
        case .internetPassword:
            copy.server = server ?? ""
            copy.protocol = `protocol` ?? InternetProtocol(rawValue: "")
            copy.authenticationType = authenticationType ?? AuthenticationType(rawValue: "")
            copy.port = port ?? 0
            copy.path = path ?? ""
            copy.securityDomain = securityDomain ?? ""
        }
        return copy
    }
}
