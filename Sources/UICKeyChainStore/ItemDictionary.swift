import Foundation
import KeychainCore

/// Items as UICKeyChainStore's `allItems` dictionaries, and their description.
enum ItemDictionary {
    static func make(_ item: Item) -> [String: Any] {
        let a = item.attributes
        var dictionary: [String: Any] = [
            "class": item.itemClass == .genericPassword ? "GenericPassword" : "InternetPassword",
            "key": a.account ?? "",
            "accessibility": a.accessibility?.rawValue ?? "",
            "synchronizable": a.synchronizable ?? false,
        ]
        if item.itemClass == .genericPassword {
            dictionary["service"] = a.service ?? ""
            dictionary["accessGroup"] = a.accessGroup ?? ""
        } else {
            dictionary["server"] = a.server ?? ""
            dictionary["protocol"] = a.protocol?.rawValue ?? ""
            dictionary["authenticationType"] = a.authenticationType?.rawValue ?? ""
        }
        if let value = item.value {
            let data = value.data
            dictionary["value"] = String(data: data, encoding: .utf8).map { $0 as Any } ?? data
        }
        return dictionary
    }

    /// `()` when empty; otherwise `(`, each item as a property-list style dictionary with
    /// sorted keys, indented by four spaces, then `)`. Unlike UICKeyChainStore, values are
    /// shown as `<redacted>`: a description ends up in logs, and secrets must not.
    static func describe(_ items: [[String: Any]]) -> String {
        guard !items.isEmpty else { return "()" }
        var out = "(\n"
        for item in items {
            out += "    {\n"
            for key in item.keys.sorted() {
                out += "        \(key) = \(key == "value" ? "\"<redacted>\"" : text(item[key]!));\n"
            }
            out += "    }\n"
        }
        return out + ")"
    }

    private static func text(_ value: Any) -> String {
        switch value {
        case let bool as Bool: return bool ? "1" : "0"
        case let string as String:
            let plain = !string.isEmpty && string.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "_.$/".unicodeScalars.contains($0) }
            return plain ? string : "\"" + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case let data as Data: return "<\(data.map { String(format: "%02x", $0) }.joined())>"
        default: return "\(value)"
        }
    }
}
