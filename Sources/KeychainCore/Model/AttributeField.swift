import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// One attribute of ``Attributes``, as a table row: the single place that knows how to test,
/// compare, copy and encode each field, which fields identify and scope an item, and which
/// keep it on this device or stay behind when it leaves (``Departure``), so that matching,
/// merging, the vault's record encoding, export and sync cannot drift apart.
enum AttributeField: UInt8, CaseIterable, Sendable {
    case service = 1, account, accessGroup, synchronizable, server, `protocol`, authenticationType, port, path
    case securityDomain, accessibility, label, comment, description, generic, creator, type, isInvisible, isNegative
    case creationDate, modificationDate, accessControl, accountIsData

    /// The fields that identify an item of `itemClass` (its primary key), besides the class.
    static func identity(of itemClass: ItemClass) -> [AttributeField] {
        switch itemClass {
        case .genericPassword: [.accessGroup, .service, .account, .synchronizable]
        case .internetPassword: [.accessGroup, .server, .account, .synchronizable, .protocol, .authenticationType, .port, .path, .securityDomain]
        }
    }

    /// The field that scopes an item for listing: a service's or a server's items.
    static func scope(of itemClass: ItemClass) -> AttributeField {
        itemClass == .genericPassword ? .service : .server
    }

    // MARK: - What may leave this device

    /// Every field, kept rather than made anew on each call as `allCases` is.
    static let every = allCases

    /// Whether this field's value keeps an item on this device when it would leave by `route`,
    /// as Apple's keychain never moves such items: a ThisDeviceOnly class binds the item to this
    /// machine and an access control to this vault's passphrase, whichever the route; sync
    /// takes only what is marked synchronizable, while an export takes synchronizable or not.
    func keepsHome(_ a: Attributes, from route: Departure) -> Bool {
        switch self {
        case .accessibility: a.accessibility?.isThisDeviceOnly ?? false
        case .accessControl: a.accessControl != nil
        case .synchronizable: route == .sync && a.synchronizable != true
        default: false
        }
    }

    /// Whether the field goes with an item that leaves by `route`: sync carries every field (the
    /// other devices hold the same item, dates and all), while an export leaves the dates
    /// behind (the importing store dates what it adds).
    func goes(by route: Departure) -> Bool {
        route == .sync || !isDate
    }

    /// Whether the attribute is present, without encoding it (this runs on every lookup).
    func isSet(in a: Attributes) -> Bool {
        switch self {
        case .service: a.service != nil
        case .account: a.account != nil
        case .accessGroup: a.accessGroup != nil
        case .synchronizable: a.synchronizable != nil
        case .server: a.server != nil
        case .protocol: a.protocol != nil
        case .authenticationType: a.authenticationType != nil
        case .port: a.port != nil
        case .path: a.path != nil
        case .securityDomain: a.securityDomain != nil
        case .accessibility: a.accessibility != nil
        case .label: a.label != nil
        case .comment: a.comment != nil
        case .description: a.description != nil
        case .generic: a.generic != nil
        case .creator: a.creator != nil
        case .type: a.type != nil
        case .isInvisible: a.isInvisible != nil
        case .isNegative: a.isNegative != nil
        case .creationDate: a.creationDate != nil
        case .modificationDate: a.modificationDate != nil
        case .accessControl: a.accessControl != nil
        case .accountIsData: a.accountIsData != nil
        }
    }

    var isDate: Bool { self == .creationDate || self == .modificationDate }

    /// A set of fields as a bit mask, for the checks every lookup makes.
    struct Mask: Equatable, Sendable {
        var bits: UInt32 = 0
        init(_ fields: [AttributeField] = []) { for field in fields { bits |= field.bit } }
        init(bits: UInt32) { self.bits = bits }
        /// The fields set in `attributes`.
        init(present attributes: Attributes) {
            for field in AttributeField.allCases where field.isSet(in: attributes) { bits |= field.bit }
        }
        func contains(all other: Mask) -> Bool { bits & other.bits == other.bits }
        func contains(_ field: AttributeField) -> Bool { bits & field.bit != 0 }
        func union(_ other: Mask) -> Mask { Mask(bits: bits | other.bits) }
        func subtracting(_ other: Mask) -> Mask { Mask(bits: bits & ~other.bits) }
        var isEmpty: Bool { bits == 0 }
        var fields: [AttributeField] { AttributeField.allCases.filter { bits & $0.bit != 0 } }
    }

    var bit: UInt32 { 1 << UInt32(rawValue) }
    static let dates = Mask([.creationDate, .modificationDate])

    func equal(_ a: Attributes, _ b: Attributes) -> Bool { encode(a) == encode(b) }

    /// Whether `a` and `b` hold the same value of this field, as ``equal(_:_:)`` says it but
    /// without encoding: text byte for byte (Swift's `==` calls canonically equivalent strings,
    /// a composed é and e with a combining accent, equal; the vault stores and digests bytes).
    func sameValue(in a: Attributes, and b: Attributes) -> Bool {
        func same(_ x: String?, _ y: String?) -> Bool {
            switch (x, y) {
            case (nil, nil): return true
            case (var x?, var y?):
                // Native strings are contiguous UTF-8: one memcmp, not a walk over their views.
                return x.withUTF8 { a in y.withUTF8 { b in a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) } }
            default: return false
            }
        }
        return switch self {
        case .service: same(a.service, b.service)
        case .account: same(a.account, b.account)
        case .accountIsData: a.accountIsData == b.accountIsData
        case .accessGroup: same(a.accessGroup, b.accessGroup)
        case .synchronizable: a.synchronizable == b.synchronizable
        case .server: same(a.server, b.server)
        case .protocol: same(a.protocol?.rawValue, b.protocol?.rawValue)
        case .authenticationType: same(a.authenticationType?.rawValue, b.authenticationType?.rawValue)
        case .port: a.port == b.port
        case .path: same(a.path, b.path)
        case .securityDomain: same(a.securityDomain, b.securityDomain)
        case .accessibility: a.accessibility == b.accessibility
        case .label: same(a.label, b.label)
        case .comment: same(a.comment, b.comment)
        case .description: same(a.description, b.description)
        case .generic: a.generic == b.generic
        case .creator: a.creator == b.creator
        case .type: a.type == b.type
        case .isInvisible: a.isInvisible == b.isInvisible
        case .isNegative: a.isNegative == b.isNegative
        case .creationDate, .modificationDate: equal(a, b)
        case .accessControl: a.accessControl == b.accessControl
        }
    }

    func copy(from source: Attributes, to target: inout Attributes) {
        switch self {
        case .service: target.service = source.service
        case .account: target.account = source.account
        case .accessGroup: target.accessGroup = source.accessGroup
        case .synchronizable: target.synchronizable = source.synchronizable
        case .server: target.server = source.server
        case .protocol: target.protocol = source.protocol
        case .authenticationType: target.authenticationType = source.authenticationType
        case .port: target.port = source.port
        case .path: target.path = source.path
        case .securityDomain: target.securityDomain = source.securityDomain
        case .accessibility: target.accessibility = source.accessibility
        case .label: target.label = source.label
        case .comment: target.comment = source.comment
        case .description: target.description = source.description
        case .generic: target.generic = source.generic
        case .creator: target.creator = source.creator
        case .type: target.type = source.type
        case .isInvisible: target.isInvisible = source.isInvisible
        case .isNegative: target.isNegative = source.isNegative
        case .creationDate: target.creationDate = source.creationDate
        case .modificationDate: target.modificationDate = source.modificationDate
        case .accessControl: target.accessControl = source.accessControl
        case .accountIsData: target.accountIsData = source.accountIsData
        }
    }

    /// The field's text, for the fields whose canonical bytes are their UTF-8; nil for the
    /// others and when unset.
    func text(in a: Attributes) -> String? {
        switch self {
        case .service: a.service
        case .account: a.account
        case .accessGroup: a.accessGroup
        case .server: a.server
        case .path: a.path
        case .securityDomain: a.securityDomain
        case .label: a.label
        case .comment: a.comment
        case .description: a.description
        case .protocol: a.protocol?.rawValue
        case .authenticationType: a.authenticationType?.rawValue
        default: nil
        }
    }

    /// The field's canonical bytes, or nil when unset: a text field's UTF-8, else the value's bytes.
    func encode(_ a: Attributes) -> [UInt8]? {
        if let text = text(in: a) { return Array(text.utf8) }
        switch self {
        case .service, .account, .accessGroup, .server, .protocol, .authenticationType, .path, .securityDomain, .label, .comment, .description:
            return nil  // text fields, unset
        case .synchronizable: return a.synchronizable.map { [$0 ? 1 : 0] }
        case .port: return a.port.map { [UInt8](bigEndian: Int64($0)) }
        case .accessibility: return a.accessibility.map { [$0.code] }
        case .generic: return a.generic.map { Array($0) }
        case .creator: return a.creator.map { [UInt8](bigEndian: Int64($0)) }
        case .type: return a.type.map { [UInt8](bigEndian: Int64($0)) }
        case .isInvisible: return a.isInvisible.map { [$0 ? 1 : 0] }
        case .isNegative: return a.isNegative.map { [$0 ? 1 : 0] }
        case .creationDate: return a.creationDate.map { [UInt8](bigEndian: Int64(($0.timeIntervalSince1970 * 1000).rounded())) }
        case .modificationDate: return a.modificationDate.map { [UInt8](bigEndian: Int64(($0.timeIntervalSince1970 * 1000).rounded())) }
        case .accessControl: return a.accessControl.map { [$0.rawValue] }
        case .accountIsData: return a.accountIsData.map { [$0 ? 1 : 0] }
        }
    }

    /// Sets the field from its canonical bytes; false if they are malformed.
    func decode(_ bytes: UnsafeRawBufferPointer, into a: inout Attributes) -> Bool {
        func string() -> String? { Self.text(bytes) }
        func bool() -> Bool? { bytes.count == 1 && bytes[0] <= 1 ? bytes[0] == 1 : nil }
        func int() -> Int64? { Self.int(bytes) }
        func date() -> Date? { int().map { Date(timeIntervalSince1970: Double($0) / 1000) } }
        switch self {
        case .service: guard let v = string() else { return false }; a.service = v
        case .account: guard let v = string() else { return false }; a.account = v
        case .accessGroup: guard let v = string() else { return false }; a.accessGroup = v
        case .synchronizable: guard let v = bool() else { return false }; a.synchronizable = v
        case .server: guard let v = string() else { return false }; a.server = v
        case .protocol: guard let v = string() else { return false }; a.protocol = InternetProtocol(rawValue: v)
        case .authenticationType: guard let v = string() else { return false }; a.authenticationType = AuthenticationType(rawValue: v)
        case .port: guard let v = int() else { return false }; a.port = Int(v)
        case .path: guard let v = string() else { return false }; a.path = v
        case .securityDomain: guard let v = string() else { return false }; a.securityDomain = v
        case .accessibility: guard bytes.count == 1, let v = Accessibility(code: bytes[0]) else { return false }; a.accessibility = v
        case .label: guard let v = string() else { return false }; a.label = v
        case .comment: guard let v = string() else { return false }; a.comment = v
        case .description: guard let v = string() else { return false }; a.description = v
        case .generic: a.generic = Data(bytes)
        case .creator: guard let v = int(), let u = UInt32(exactly: v) else { return false }; a.creator = u
        case .type: guard let v = int(), let u = UInt32(exactly: v) else { return false }; a.type = u
        case .isInvisible: guard let v = bool() else { return false }; a.isInvisible = v
        case .isNegative: guard let v = bool() else { return false }; a.isNegative = v
        case .creationDate: guard let v = date() else { return false }; a.creationDate = v
        case .modificationDate: guard let v = date() else { return false }; a.modificationDate = v
        case .accessControl: guard bytes.count == 1, let v = AccessControl(rawValue: bytes[0]) else { return false }; a.accessControl = v
        case .accountIsData: guard let v = bool() else { return false }; a.accountIsData = v
        }
        return true
    }

    /// Text from bytes that must be UTF-8; nil when they are not. ASCII, what names almost
    /// always are, is valid UTF-8 as it stands and is checked a word at a time: the general
    /// validation (generic over the encoding) cost a tenth of a listing.
    static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
        var offset = 0, highBits: UInt64 = 0
        while offset + 8 <= bytes.count {
            highBits |= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            highBits |= UInt64(bytes[offset])
            offset += 1
        }
        if highBits & 0x8080_8080_8080_8080 == 0 { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func int(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count == 8 else { return nil }
        return bytes.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
}
