/// Writes binary property lists (`bplist00`) object by object, with the smallest offset and
/// reference sizes that fit, as Apple's writer does. Nothing is shared unless the caller
/// shares it: ``KeyedArchiveWriter`` decides what an archive shares.
struct BinaryPropertyListWriter {
    enum Object {
        case null, bool(Bool)
        case integer(Int64), unsignedInteger(UInt64)
        case real(Double), date(Double)
        case data([UInt8]), string(String)
        case uid(Int)
        case array([Int])
        case dictionary([(key: Int, value: Int)])
    }

    private(set) var objects: [Object] = []

    /// Adds an object; its index, for containers and ``bytes(top:)``.
    mutating func add(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    /// The list, with object `top` as its root.
    func bytes(top: Int) -> [UInt8] {
        let referenceSize = Self.size(for: UInt64(objects.count))
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(out.count)
            append(object, referenceSize: referenceSize, to: &out)
        }
        let table = out.count
        let offsetSize = Self.size(for: UInt64(table))
        for offset in offsets { Self.appendBigEndian(UInt64(offset), size: offsetSize, to: &out) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        Self.appendBigEndian(UInt64(objects.count), size: 8, to: &out)
        Self.appendBigEndian(UInt64(top), size: 8, to: &out)
        Self.appendBigEndian(UInt64(table), size: 8, to: &out)
        return out
    }

    private func append(_ object: Object, referenceSize: Int, to out: inout [UInt8]) {
        switch object {
        case .null: out.append(0x00)
        case .bool(let value): out.append(value ? 0x09 : 0x08)
        case .integer(let value):
            if value >= 0 {
                let size = Self.size(for: UInt64(value))
                // 8-byte integers are signed: a value needing all 8 bytes is written in 8 anyway.
                out.append(0x10 | UInt8(size.trailingZeroBitCount))
                Self.appendBigEndian(UInt64(value), size: size, to: &out)
            } else {
                out.append(0x13)
                Self.appendBigEndian(UInt64(bitPattern: value), size: 8, to: &out)
            }
        case .unsignedInteger(let value):
            if value <= UInt64(Int64.max) {
                append(.integer(Int64(value)), referenceSize: referenceSize, to: &out)
            } else {
                out.append(0x14)  // 16 bytes, high half zero: how Apple writes the top of UInt64
                Self.appendBigEndian(0, size: 8, to: &out)
                Self.appendBigEndian(value, size: 8, to: &out)
            }
        case .real(let value):
            out.append(0x23)
            Self.appendBigEndian(value.bitPattern, size: 8, to: &out)
        case .date(let value):
            out.append(0x33)
            Self.appendBigEndian(value.bitPattern, size: 8, to: &out)
        case .data(let bytes):
            Self.appendMarker(0x4, count: bytes.count, to: &out)
            out += bytes
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                Self.appendMarker(0x5, count: text.utf8.count, to: &out)
                out += text.utf8
            } else {
                let units = Array(text.utf16)
                Self.appendMarker(0x6, count: units.count, to: &out)
                for unit in units { out += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            }
        case .uid(let value):
            let size = Self.size(for: UInt64(value))
            out.append(0x80 | UInt8(size - 1))
            Self.appendBigEndian(UInt64(value), size: size, to: &out)
        case .array(let elements):
            Self.appendMarker(0xA, count: elements.count, to: &out)
            for element in elements { Self.appendBigEndian(UInt64(element), size: referenceSize, to: &out) }
        case .dictionary(let entries):
            Self.appendMarker(0xD, count: entries.count, to: &out)
            for entry in entries { Self.appendBigEndian(UInt64(entry.key), size: referenceSize, to: &out) }
            for entry in entries { Self.appendBigEndian(UInt64(entry.value), size: referenceSize, to: &out) }
        }
    }

    /// A marker with its count: in the low nibble below 15, else as an integer object after it.
    private static func appendMarker(_ kind: UInt8, count: Int, to out: inout [UInt8]) {
        if count < 15 {
            out.append(kind << 4 | UInt8(count))
            return
        }
        out.append(kind << 4 | 0x0F)
        let size = size(for: UInt64(count))
        out.append(0x10 | UInt8(size.trailingZeroBitCount))
        appendBigEndian(UInt64(count), size: size, to: &out)
    }

    /// The smallest of 1, 2, 4 or 8 bytes that holds `value`.
    private static func size(for value: UInt64) -> Int {
        switch value {
        case 0..<(1 << 8): 1
        case 0..<(1 << 16): 2
        case 0..<(1 << 32): 4
        default: 8
        }
    }

    private static func appendBigEndian(_ value: UInt64, size: Int, to out: inout [UInt8]) {
        for shift in stride(from: 8 * (size - 1), through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
