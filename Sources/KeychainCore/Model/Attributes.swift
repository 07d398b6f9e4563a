import FoundationEssentials

/// The attributes of a keychain item, or the attributes a query names.
///
/// Every attribute is optional. In an item, a missing identity attribute is stored as its
/// empty value (no access group, not synchronizable...). In a query, a missing attribute is a
/// wildcard and a present one must match exactly.
public struct Attributes: Sendable, Hashable {
    // Identity of a generic password (with the class): access group, service, account, synchronizable.
    /// The service of a generic password (`kSecAttrService`).
    public var service: String?
    /// The account (`kSecAttrAccount`).
    public var account: String?
    /// Whether the account was given as bytes (`CFData`, as SwiftKeychainWrapper gives it)
    /// rather than text. The `Security` face hands it back in the form it was given, as
    /// Apple's keychain does; it is not part of the identity (text and its UTF-8 bytes name
    /// the same item).
    public var accountIsData: Bool?
    /// The access group (`kSecAttrAccessGroup`): a namespace shared by the programs that name it.
    public var accessGroup: String?
    /// Whether the item is synchronizable (`kSecAttrSynchronizable`): an iCloud valet's.
    public var synchronizable: Bool?
    // Identity of an internet password adds these (and drops service).
    /// The server of an internet password (`kSecAttrServer`).
    public var server: String?
    /// The protocol of an internet password (`kSecAttrProtocol`).
    public var `protocol`: InternetProtocol?
    /// The authentication scheme of an internet password (`kSecAttrAuthenticationType`).
    public var authenticationType: AuthenticationType?
    /// The port of an internet password (`kSecAttrPort`).
    public var port: Int?
    /// The path of an internet password (`kSecAttrPath`).
    public var path: String?
    /// The security domain of an internet password, such as an HTTP realm (`kSecAttrSecurityDomain`).
    public var securityDomain: String?

    /// When the item can be read.
    public var accessibility: Accessibility?
    /// What a read must prove (user presence...); nil for none. Only the vault honours it.
    public var accessControl: AccessControl?

    // Descriptive attributes.
    /// The label keychain browsers show (`kSecAttrLabel`).
    public var label: String?
    /// A comment (`kSecAttrComment`).
    public var comment: String?
    /// A description of the item's kind (`kSecAttrDescription`).
    public var description: String?
    /// Generic data kept with the item (`kSecAttrGeneric`), encrypted like every attribute.
    public var generic: Data?
    /// A creator code (`kSecAttrCreator`).
    public var creator: UInt32?
    /// A type code (`kSecAttrType`).
    public var type: UInt32?
    /// Whether keychain browsers hide the item (`kSecAttrIsInvisible`).
    public var isInvisible: Bool?
    /// Whether the item is a negative entry, a password the user chose not to store (`kSecAttrIsNegative`).
    public var isNegative: Bool?

    /// Set by the store; ignored when adding or updating.
    public var creationDate: Date?
    /// Set by the store; ignored when adding or updating.
    public var modificationDate: Date?

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
        self.service = service; self.account = account; self.accessGroup = accessGroup
        self.synchronizable = synchronizable; self.server = server; self.protocol = `protocol`
        self.authenticationType = authenticationType; self.port = port; self.path = path
        self.securityDomain = securityDomain; self.accessibility = accessibility; self.label = label
        self.comment = comment; self.description = description; self.generic = generic
        self.creator = creator; self.type = type; self.isInvisible = isInvisible; self.isNegative = isNegative
        self.accessControl = accessControl
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
