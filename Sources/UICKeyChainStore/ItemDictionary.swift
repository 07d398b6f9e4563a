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

    /// As UICKeyChainStore's `-description`: `()` when empty; otherwise `(` and a newline, then
    /// for each item four spaces and the item as `NSDictionary` describes itself (`{`, each
    /// entry `key = value;` on its own line indented by four spaces, in key order, `}`), with
    /// nothing between items, then `)`. Unlike UICKeyChainStore, every value is shown as
    /// `<redacted>` (and never read to describe it): a description ends up in logs.
    static func describe(_ items: [[String: Any]]) -> String {
        guard !items.isEmpty else { return "()" }
        var out = "(\n"
        for item in items {
            var entries = item
            entries["value"] = "<redacted>"
            out += "    {\n"
            for key in entries.keys.sorted() {
                out += "    \(text(key)) = \(text(entries[key]!));\n"
            }
            out += "}"
        }
        return out + ")"
    }

    /// A value as an old-style property list shows it in a description: numbers and booleans
    /// bare (`0`, `1`), strings bare when only letters, digits, `_` and `$`, else quoted.
    private static func text(_ value: Any) -> String {
        switch value {
        case let bool as Bool: return bool ? "1" : "0"
        case let string as String:
            let plain = !string.isEmpty && string.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "$") }
            return plain ? string : "\"" + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case let data as Data: return "{length = \(data.count), bytes = 0x\(data.prefix(24).map { String(format: "%02x", $0) }.joined())}"
        default: return "\(value)"
        }
    }
}
