import FoundationEssentials
import KeychainCore

/// An item's non-secret attributes, for listings.
struct ItemDescription {
    let item: Item

    var json: JSON {
        let a = item.attributes
        var object: [String: JSON] = ["class": .string(item.itemClass.rawValue)]
        func put(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        put("service", a.service); put("server", a.server); put("account", a.account)
        put("accessGroup", a.accessGroup.flatMap { $0.isEmpty ? nil : $0 })
        put("accessibility", a.accessibility.map { "\($0)" }); put("label", a.label); put("comment", a.comment)
        put("protocol", a.protocol?.rawValue); put("path", a.path.flatMap { $0.isEmpty ? nil : $0 })
        if let port = a.port, port != 0 { object["port"] = .number(port) }
        if let sync = a.synchronizable { object["synchronizable"] = .bool(sync) }
        put("created", a.creationDate.map { $0.formatted(.iso8601) })
        put("modified", a.modificationDate.map { $0.formatted(.iso8601) })
        return .object(object)
    }

    /// The item as a person names it: its class, service or server, and account.
    var name: String {
        let a = item.attributes
        let place = a.service.map { "service '\(Self.escaped($0))'" } ?? a.server.map { "server '\(Self.escaped($0))'" } ?? "no service"
        return "the \(item.itemClass.rawValue) item of \(place), account '\(Self.escaped(a.account ?? ""))'"
    }

    /// One line of tab-separated fields, each escaped (``escaped(_:)``): a label or an
    /// account written by anyone cannot forge a row or send the terminal escape sequences.
    var line: String {
        let a = item.attributes
        let name = item.itemClass == .genericPassword ? (a.service ?? "") : (a.server ?? "")
        var parts = ["\(item.itemClass.rawValue)", name, a.account ?? ""]
        if item.itemClass == .internetPassword {
            // What tells one login's items apart: without them, two lines would look the same.
            if let code = a.protocol { parts.append("protocol=\(ProtocolNames.name(of: code))") }
            if let port = a.port, port != 0 { parts.append("port=\(port)") }
            if let path = a.path, !path.isEmpty { parts.append("path=\(path)") }
        }
        if let accessibility = a.accessibility { parts.append("\(accessibility)") }
        if let label = a.label { parts.append("label=\(label)") }
        return parts.map(Self.escaped).joined(separator: "\t")
    }

    /// The text with control characters (C0, DEL, C1) and backslashes written as escapes:
    /// `\t`, `\n`, `\r`, `\\`, else `\u{XX}`.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x5C: out += "\\\\"
            case 0x00..<0x20, 0x7F..<0xA0: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
