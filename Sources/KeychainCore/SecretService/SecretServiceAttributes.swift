import FoundationEssentials

/// How an item's attributes are written as Secret Service attributes (all strings), so that
/// items are findable with `secret-tool` and readable by other programs.
///
/// | attribute | value |
/// |---|---|
/// | `xdg:schema` | `org.swift-keychain.Item`: what makes an item this library's (searches require it unless foreign items are asked for) |
/// | `class` | `genp` or `inet` (missing: `genp`) |
/// | `service`, `account` | as given |
/// | `access-group` | when not empty |
/// | `synchronizable` | `true` when synchronizable |
/// | `accessibility` | Apple's raw value: `ak`, `ck`, `akpu`, `aku`, `cku`, `dk`, `dku` (missing: `ak`) |
/// | `server`, `protocol`, `authentication-type`, `port`, `path`, `security-domain` | internet passwords |
/// | `comment`, `description`, `generic` (base64), `creator`, `type`, `invisible`, `negative` | when set |
/// | `account-is-data` | `true` when the account was given as bytes |
///
/// The item's label is the Secret Service label (what Seahorse shows).
enum SecretServiceAttributes {
    static let schemaName = "org.swift-keychain.Item"
    static let partitionKey = "keychain-partition"

    private static let names: [AttributeField: String] = [
        .service: "service", .account: "account", .accessGroup: "access-group", .synchronizable: "synchronizable",
        .server: "server", .protocol: "protocol", .authenticationType: "authentication-type", .port: "port", .path: "path",
        .securityDomain: "security-domain", .accessibility: "accessibility", .comment: "comment", .description: "description",
        .generic: "generic", .creator: "creator", .type: "type", .isInvisible: "invisible", .isNegative: "negative",
        .accountIsData: "account-is-data",
    ]

    /// The attributes to store for an item (defaults omitted where the decoder restores them).
    static func encode(_ itemClass: ItemClass, _ attributes: Attributes, partition: String?) -> [String: String] {
        var table = ["xdg:schema": schemaName, "class": itemClass.rawValue]
        if let partition { table[partitionKey] = partition }
        let normalized = attributes.normalizedIdentity(for: itemClass)
        for (field, name) in names {
            guard let value = text(field, normalized) else { continue }
            table[name] = value
        }
        table["accessibility"] = (attributes.accessibility ?? .whenUnlocked).rawValue
        return table
    }

    /// The attributes to write over an existing item's `raw` ones when its attributes change
    /// from `old` to `new`: only the attributes whose encoding changed are set or removed, so
    /// everything else the item carries (another program's schema, an `application`, a value
    /// this library cannot parse) stays exactly as it was.
    static func merge(_ itemClass: ItemClass, old: Attributes, new: Attributes, into raw: [String: String], partition: String?) -> [String: String] {
        let before = encode(itemClass, old, partition: partition), after = encode(itemClass, new, partition: partition)
        var table = raw
        for key in Set(before.keys).union(after.keys) where before[key] != after[key] {
            table[key] = after[key]
        }
        return table
    }

    /// The attributes the server can match for `query`: every named non-default value. What
    /// it cannot match (defaults, the label, the class of items from other programs) the store
    /// checks after reading.
    static func search(_ query: Query, partition: String?) -> [String: String] {
        var table: [String: String] = [:]
        if let partition { table[partitionKey] = partition }
        for (field, name) in names {
            guard let value = text(field, query.attributes) else { continue }
            table[name] = value
        }
        if query.attributes.accessibility == .whenUnlocked { table["accessibility"] = nil }
        return table
    }

    /// An item's class and attributes from its Secret Service attributes; nil for items that
    /// are not keychain items (an unknown class).
    static func decode(_ table: [String: String]) -> (ItemClass, Attributes)? {
        guard let itemClass = ItemClass(rawValue: table["class"] ?? "genp") else { return nil }
        var attributes = Attributes()
        for (field, name) in names {
            guard let value = table[name] else { continue }
            switch field {
            case .synchronizable: attributes.synchronizable = value == "true"
            case .isInvisible: attributes.isInvisible = value == "true"
            case .isNegative: attributes.isNegative = value == "true"
            case .accountIsData: attributes.accountIsData = value == "true"
            case .port: attributes.port = Int(value)
            case .creator: attributes.creator = UInt32(value)
            case .type: attributes.type = UInt32(value)
            case .generic: attributes.generic = Data(base64Encoded: value)
            case .protocol: attributes.protocol = InternetProtocol(rawValue: value)
            case .authenticationType: attributes.authenticationType = AuthenticationType(rawValue: value)
            case .accessibility: attributes.accessibility = Accessibility(rawValue: value)
            case .service: attributes.service = value
            case .account: attributes.account = value
            case .accessGroup: attributes.accessGroup = value
            case .server: attributes.server = value
            case .path: attributes.path = value
            case .securityDomain: attributes.securityDomain = value
            case .comment: attributes.comment = value
            case .description: attributes.description = value
            default: break
            }
        }
        attributes.accessibility = attributes.accessibility ?? .whenUnlocked
        return (itemClass, attributes.normalizedIdentity(for: itemClass))
    }

    /// A label a person understands: the item's own, else service (or server) and account.
    static func label(_ itemClass: ItemClass, _ attributes: Attributes) -> String {
        if let label = attributes.label, !label.isEmpty { return label }
        let place = itemClass == .genericPassword ? attributes.service ?? "" : attributes.server ?? ""
        return attributes.account.map { "\(place) (\($0))" } ?? place
    }

    /// The text of a field, or nil when unset or at its default (empty access group, not
    /// synchronizable, empty internet fields).
    private static func text(_ field: AttributeField, _ a: Attributes) -> String? {
        func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
        switch field {
        case .service: return a.service
        case .account: return a.account
        case .accessGroup: return nonEmpty(a.accessGroup)
        case .synchronizable: return a.synchronizable == true ? "true" : nil
        case .server: return nonEmpty(a.server)
        case .protocol: return nonEmpty(a.protocol?.rawValue)
        case .authenticationType: return nonEmpty(a.authenticationType?.rawValue)
        case .port: return a.port.flatMap { $0 == 0 ? nil : String($0) }
        case .path: return nonEmpty(a.path)
        case .securityDomain: return nonEmpty(a.securityDomain)
        case .accessibility: return a.accessibility?.rawValue
        case .comment: return a.comment
        case .description: return a.description
        case .generic: return a.generic?.base64EncodedString()
        case .creator: return a.creator.map { String($0) }
        case .type: return a.type.map { String($0) }
        case .isInvisible: return a.isInvisible.map { $0 ? "true" : "false" }
        case .isNegative: return a.isNegative.map { $0 ? "true" : "false" }
        case .accountIsData: return a.accountIsData == true ? "true" : nil
        default: return nil
        }
    }
}
