import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The little JSON the command prints: never a secret, keys sorted for stable output.
indirect enum JSON {
    case string(String), number(Int), bool(Bool), array([JSON]), object([String: JSON])

    var text: String {
        switch self {
        case .string(let s): return Self.quote(s)
        case .number(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.keys.sorted().map { Self.quote($0) + ":" + fields[$0]!.text }.joined(separator: ",") + "}"
        }
    }

    static func encode(_ strings: [String]) -> String { JSON.array(strings.map { .string($0) }).text }
    static func encode(_ values: [JSON]) -> String { JSON.array(values).text }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
