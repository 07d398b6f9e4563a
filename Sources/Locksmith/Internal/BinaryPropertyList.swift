/// A strict reader of binary property lists (`bplist00`), for keyed archives from untrusted
/// stores: Foundation's own reader, unarchiver and bridging crash on some malformed lists
/// (fuzzing found three ways), so Locksmith's payloads are read here instead.
///
/// It accepts only what a keyed archive holds (no sets) and checks every offset, length and
/// reference. Its work is bounded by the input: objects are parsed lazily, once per offset,
/// containers keep the indices of their elements (never copies of them), and every byte or
/// reference read is charged to a budget proportional to the input's size, so a list whose
/// objects overlap or share elements cannot make it do more than a well-formed list of the
/// same size would.
enum BinaryPropertyList {
    /// One object of the list; containers refer to other objects by index.
    enum Object: Equatable {
        case null, bool(Bool)
        /// Every integer Foundation writes that fits 64 bits signed: 1-, 2- and 4-byte ones are
        /// unsigned, 8-byte ones two's complement, 16-byte ones sign-extended.
        case integer(Int64)
        /// A 16-byte integer above `Int64.max`: how Foundation writes the upper half of `UInt64`.
        case unsignedInteger(UInt64)
        case real(Double), date(Double)
        case data([UInt8]), string(String)
        case uid(Int)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// The list's objects, read on demand.
    struct Document {
        private let bytes: [UInt8]
        private let count: Int, offsetSize: Int, referenceSize: Int, table: Int, limit: Int
        /// The index of the top object.
        let top: Int
        private var parsed: [Int: Object] = [:]
        /// What may still be read: bytes of data and strings plus references, across every
        /// object parsed. A well-formed list reads each of its bytes once at most.
        private var budget: Int
        /// How much work parsing has done so far (bytes and references read, objects parsed).
        private(set) var work = 0

        /// Checks the header and trailer; nil when the bytes are not a binary property list.
        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else { return nil }
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
                let count = Self.unsigned(bytes, trailer + 8, 8).flatMap(Int.init(exactly:)),
                let top = Self.unsigned(bytes, trailer + 16, 8).flatMap(Int.init(exactly:)),
                let table = Self.unsigned(bytes, trailer + 24, 8).flatMap(Int.init(exactly:)),
                count > 0, top < count, table >= 8, table <= trailer,
                count <= (trailer - table) / offsetSize
            else { return nil }
            self.bytes = bytes
            self.count = count
            self.offsetSize = offsetSize
            self.referenceSize = referenceSize
            self.table = table
            self.limit = trailer
            self.top = top
            budget = bytes.count
        }

        /// Object `index`, or nil when it is out of range, malformed, or the budget is spent.
        mutating func object(_ index: Int) -> Object? {
            work += 1
            guard index >= 0, index < count,
                let offset = Self.unsigned(bytes, table + index * offsetSize, offsetSize).flatMap(Int.init(exactly:)),
                offset >= 8, offset < limit
            else { return nil }
            if let known = parsed[offset] { return known }
            guard let object = parse(at: offset) else { return nil }
            parsed[offset] = object
            return object
        }

        private mutating func charge(_ amount: Int) -> Bool {
            guard amount <= budget else { return false }
            budget -= amount
            work += amount
            return true
        }

        private mutating func parse(at offset: Int) -> Object? {
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
                return integer(at: offset + 1, sizeExponent: low)
            case 0x2, 0x3:
                let size = kind == 0x3 ? 8 : 1 << min(low, 4)
                guard kind == 0x2 ? (low == 2 || low == 3) : low == 3,
                    let raw = Self.unsigned(bytes, offset + 1, size), offset + 1 + size <= limit
                else { return nil }
                // By bit pattern: negative values, -0.0, infinities and NaN are all reals.
                let value = size == 8 ? Double(bitPattern: raw) : Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw)))
                return kind == 0x3 ? .date(value) : .real(value)
            case 0x4, 0x5, 0x6, 0xA, 0xD:
                guard let (start, length) = extent(at: offset, low: low) else { return nil }
                switch kind {
                case 0x4:
                    guard length <= limit - start, charge(length) else { return nil }
                    return .data(Array(bytes[start..<(start + length)]))
                case 0x5:
                    guard length <= limit - start, charge(length),
                        let text = String(validating: bytes[start..<(start + length)], as: UTF8.self),
                        text.utf8.allSatisfy({ $0 < 0x80 })
                    else { return nil }
                    return .string(text)
                case 0x6:
                    guard length <= (limit - start) / 2, charge(2 * length) else { return nil }
                    let units = (0..<length).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                    guard let text = String(validating: units, as: UTF16.self) else { return nil }
                    return .string(text)
                case 0xA:
                    guard length <= (limit - start) / referenceSize, charge(length),
                        let elements = references(at: start, count: length)
                    else { return nil }
                    return .array(elements)
                default:
                    guard length <= (limit - start) / (2 * referenceSize), charge(2 * length),
                        let keys = references(at: start, count: length),
                        let values = references(at: start + length * referenceSize, count: length)
                    else { return nil }
                    return .dictionary(keys: keys, values: values)
                }
            case 0x8:
                guard let value = Self.unsigned(bytes, offset + 1, low + 1), offset + 2 + low <= limit,
                    let uid = Int(exactly: value)
                else { return nil }
                return .uid(uid)
            default:
                return nil  // sets and reserved markers: not in a keyed archive
            }
        }

        /// An integer object's value: two's complement at 8 and 16 bytes, as Foundation writes.
        private func integer(at start: Int, sizeExponent: Int) -> Object? {
            guard sizeExponent <= 4 else { return nil }
            let size = 1 << sizeExponent
            guard start + size <= limit else { return nil }
            switch size {
            case 1, 2, 4:
                return Self.unsigned(bytes, start, size).map { .integer(Int64($0)) }
            case 8:
                return Self.unsigned(bytes, start, 8).map { .integer(Int64(bitPattern: $0)) }
            default:
                guard let high = Self.unsigned(bytes, start, 8), let low = Self.unsigned(bytes, start + 8, 8) else { return nil }
                if high == 0 { return low <= UInt64(Int64.max) ? .integer(Int64(low)) : .unsignedInteger(low) }
                if high == UInt64.max && low > UInt64(Int64.max) { return .integer(Int64(bitPattern: low)) }
                return nil  // beyond 64 bits: nothing a payload can hold
            }
        }

        /// Where a variable-length object's contents start, and how many units it has (the
        /// marker's low nibble, or an integer object following it when that nibble is 0xF).
        private func extent(at offset: Int, low: Int) -> (start: Int, length: Int)? {
            let start = offset + 1
            guard low == 0x0F else { return (start, low) }
            guard start < limit, bytes[start] >> 4 == 0x1 else { return nil }
            let exponent = Int(bytes[start] & 0x0F)
            guard exponent <= 3, let length = Self.unsigned(bytes, start + 1, 1 << exponent).flatMap(Int.init(exactly:)) else { return nil }
            let contents = start + 1 + (1 << exponent)
            guard contents <= limit else { return nil }
            return (contents, length)
        }

        private func references(at start: Int, count: Int) -> [Int]? {
            var result: [Int] = []
            result.reserveCapacity(count)
            for i in 0..<count {
                guard let reference = Self.unsigned(bytes, start + i * referenceSize, referenceSize).flatMap(Int.init(exactly:)),
                    reference < self.count
                else { return nil }
                result.append(reference)
            }
            return result
        }

        /// The big-endian unsigned integer of `size` (1...8) bytes at `at`, nil when out of bounds.
        static func unsigned(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64? {
            guard at >= 0, size > 0, size <= 8, at <= bytes.count - size else { return nil }
            var value: UInt64 = 0
            for byte in bytes[at..<(at + size)] { value = value << 8 | UInt64(byte) }
            return value
        }
    }
}
