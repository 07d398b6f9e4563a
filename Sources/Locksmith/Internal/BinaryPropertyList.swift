/// A strict reader of binary property lists (`bplist00`), for keyed archives from untrusted
/// stores: Foundation's own reader, unarchiver and bridging crash on some malformed lists
/// (fuzzing found three ways), so Locksmith's payloads are read here instead. It accepts only
/// what a keyed archive holds (no sets), checks every offset, length and reference, and
/// refuses cycles.
enum BinaryPropertyList {
    indirect enum Value {
        case null, bool(Bool), integer(Int64), real(Double), date(Double), data([UInt8]), string(String)
        case uid(Int), array([Value]), dictionary([String: Value])
    }

    static let maximumDepth = 64

    /// The top object, or nil when the bytes are not a well-formed binary property list.
    static func parse(_ bytes: [UInt8]) -> Value? {
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else { return nil }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
              let count = integer(bytes, trailer + 8, 8), let top = integer(bytes, trailer + 16, 8),
              let table = integer(bytes, trailer + 24, 8),
              count > 0, count < 1 << 20, top >= 0, top < count, table >= 8, table <= trailer,
              count <= (trailer - table) / offsetSize else { return nil }
        var reader = Reader(bytes: bytes, count: count, offsetSize: offsetSize, referenceSize: referenceSize, table: table, limit: trailer)
        return reader.object(top, depth: 0)
    }

    private static func integer(_ bytes: [UInt8], _ at: Int, _ size: Int) -> Int? {
        guard at >= 0, size > 0, size <= 8, at + size <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[at..<(at + size)] { value = value << 8 | UInt64(byte) }
        return value > UInt64(Int.max) ? nil : Int(value)
    }

    private struct Reader {
        let bytes: [UInt8]
        let count: Int, offsetSize: Int, referenceSize: Int, table: Int, limit: Int
        var inProgress = Set<Int>()

        init(bytes: [UInt8], count: Int, offsetSize: Int, referenceSize: Int, table: Int, limit: Int) {
            self.bytes = bytes; self.count = count; self.offsetSize = offsetSize
            self.referenceSize = referenceSize; self.table = table; self.limit = limit
        }

        mutating func object(_ index: Int, depth: Int) -> Value? {
            guard index >= 0, index < count, depth < maximumDepth, !inProgress.contains(index),
                  let offset = BinaryPropertyList.integer(bytes, table + index * offsetSize, offsetSize), offset >= 8, offset < limit
            else { return nil }
            inProgress.insert(index)
            defer { inProgress.remove(index) }
            let marker = bytes[offset], kind = marker >> 4, low = Int(marker & 0x0F)
            switch kind {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: return nil
                }
            case 0x1:
                guard low <= 3, let value = BinaryPropertyList.integer(bytes, offset + 1, 1 << low) else { return nil }
                return .integer(Int64(value))
            case 0x2, 0x3:
                let size = kind == 0x3 ? 8 : 1 << low
                guard size == 4 || size == 8, offset + 1 + size <= limit,
                      let raw = BinaryPropertyList.integer(bytes, offset + 1, size).map(UInt64.init) else { return nil }
                let value = size == 8 ? Double(bitPattern: raw) : Double(Float(bitPattern: UInt32(raw)))
                return kind == 0x3 ? .date(value) : .real(value)
            case 0x4, 0x5, 0x6, 0x8, 0xA, 0xD:
                var start = offset + 1
                var length = low
                if kind != 0x8 && low == 0x0F {
                    guard start < limit, bytes[start] >> 4 == 0x1, bytes[start] & 0x0F <= 3,
                          let extended = BinaryPropertyList.integer(bytes, start + 1, 1 << Int(bytes[start] & 0x0F)) else { return nil }
                    start += 1 + (1 << Int(bytes[start] & 0x0F))
                    length = extended
                }
                switch kind {
                case 0x4:
                    guard start <= limit, length <= limit - start else { return nil }
                    return .data(Array(bytes[start..<(start + length)]))
                case 0x5:
                    guard start <= limit, length <= limit - start, let text = String(validating: bytes[start..<(start + length)], as: UTF8.self),
                          text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
                    return .string(text)
                case 0x6:
                    guard start <= limit, length <= (limit - start) / 2 else { return nil }
                    let units = (0..<length).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                    guard let text = String(validating: units, as: UTF16.self) else { return nil }
                    return .string(text)
                case 0x8:
                    guard let value = BinaryPropertyList.integer(bytes, offset + 1, low + 1) else { return nil }
                    return .uid(value)
                case 0xA:
                    guard start <= limit, length <= (limit - start) / referenceSize else { return nil }
                    var elements: [Value] = []
                    for i in 0..<length {
                        guard let reference = BinaryPropertyList.integer(bytes, start + i * referenceSize, referenceSize),
                              let element = object(reference, depth: depth + 1) else { return nil }
                        elements.append(element)
                    }
                    return .array(elements)
                default:
                    guard start <= limit, length <= (limit - start) / (2 * referenceSize) else { return nil }
                    var dictionary: [String: Value] = [:]
                    for i in 0..<length {
                        guard let keyReference = BinaryPropertyList.integer(bytes, start + i * referenceSize, referenceSize),
                              let valueReference = BinaryPropertyList.integer(bytes, start + (length + i) * referenceSize, referenceSize),
                              case .string(let key)? = object(keyReference, depth: depth + 1),
                              let value = object(valueReference, depth: depth + 1) else { return nil }
                        dictionary[key] = value
                    }
                    return .dictionary(dictionary)
                }
            default:
                return nil  // sets and reserved markers: not in a keyed archive
            }
        }
    }
}
