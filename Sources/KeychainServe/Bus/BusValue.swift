import KeychainCore

/// One D-Bus value, as the Secret Service's messages carry them: the handlers read arguments
/// and build replies in these terms, and only ``BusMessage`` speaks sd-bus.
///
/// Byte arrays (`ay`: secrets, their IVs, Diffie-Hellman public values) are held in
/// ``SecretBytes``, wiped when dropped.
indirect enum BusValue {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case bytes(SecretBytes)
    /// An array of values of one type (its signature, `element`); dictionaries are arrays of `entry`.
    case array(element: String, [BusValue])
    /// A dictionary entry, `{kv}`: only as the element of an array.
    case entry(BusValue, BusValue)
    case structure([BusValue])
    case variant(BusValue)

    /// The value's D-Bus signature.
    var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .entry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    // MARK: - Building

    /// An array of object paths (`ao`).
    static func paths(_ paths: [String]) -> BusValue { .array(element: "o", paths.map { .objectPath($0) }) }

    /// A string-to-string dictionary (`a{ss}`), in key order so that replies are stable.
    static func stringMap(_ map: [String: String]) -> BusValue {
        .array(element: "{ss}", map.sorted { $0.key < $1.key }.map { .entry(.string($0.key), .string($0.value)) })
    }

    /// A property dictionary (`a{sv}`).
    static func properties(_ properties: [(String, BusValue)]) -> BusValue {
        .array(element: "{sv}", properties.map { .entry(.string($0.0), .variant($0.1)) })
    }

    // MARK: - Reading

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var objectPath: String? { if case .objectPath(let s) = self { s } else { nil } }
    var boolean: Bool? { if case .boolean(let b) = self { b } else { nil } }
    var bytes: SecretBytes? { if case .bytes(let b) = self { b } else { nil } }
    var variantContents: BusValue? { if case .variant(let v) = self { v } else { nil } }

    /// The elements of an array of object paths (`ao`); nil for anything else.
    var pathList: [String]? {
        guard case .array("o", let elements) = self else { return nil }
        return elements.compactMap(\.objectPath)
    }

    /// The entries of a dictionary whose keys are strings (`a{s...}`), in message order, a key
    /// given twice refused (nil): two values for one attribute name would make a search or a
    /// stored item mean two things.
    var stringKeyedEntries: [(String, BusValue)]? {
        guard case .array(let element, let elements) = self, element.hasPrefix("{s") else { return nil }
        var seen = Set<String>()
        var out: [(String, BusValue)] = []
        for case .entry(.string(let key), let value) in elements {
            guard seen.insert(key).inserted else { return nil }
            out.append((key, value))
        }
        return out.count == elements.count ? out : nil
    }

    /// A string-to-string dictionary (`a{ss}`); nil for anything else or a key given twice.
    var stringMap: [String: String]? {
        guard case .array("{ss}", _) = self, let entries = stringKeyedEntries else { return nil }
        var map: [String: String] = [:]
        for (key, value) in entries {
            guard let text = value.string else { return nil }
            map[key] = text
        }
        return map
    }
}
