import KeychainCore

/// The Assuan protocol's escaping, as pinentry speaks it over its standard input and output:
/// a line ends at LF, so a command's argument and a data line carry `%`, CR, LF (and any other
/// control byte) as `%XX`, in both directions.
enum AssuanCoding {
    /// The longest line either side may send (the protocol's limit, LF included).
    static let lineLimit = 1_000

    /// `text` as a command's argument: `%`, and every byte below 0x20, as `%XX`; the rest as is
    /// (UTF-8 passes through, as pinentry expects).
    static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            if byte == UInt8(ascii: "%") || byte < 0x20 {
                let digits = Array("0123456789ABCDEF".utf8)
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 15)]]
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `escaped` stands for, decoded straight into wipeable memory (a data line's
    /// payload: the passphrase); nil when a `%` is not followed by two hex digits.
    static func decode(_ escaped: UnsafeRawBufferPointer) -> SecretBytes? {
        var count = 0, index = 0
        while index < escaped.count {
            if escaped[index] == UInt8(ascii: "%") {
                guard index + 2 < escaped.count, hex(escaped[index + 1]) != nil, hex(escaped[index + 2]) != nil else { return nil }
                index += 3
            } else {
                index += 1
            }
            count += 1
        }
        return SecretBytes(count: count) { out in
            var from = 0, to = 0
            while from < escaped.count {
                if escaped[from] == UInt8(ascii: "%"), let high = hex(escaped[from + 1]), let low = hex(escaped[from + 2]) {
                    out[to] = high << 4 | low
                    from += 3
                } else {
                    out[to] = escaped[from]
                    from += 1
                }
                to += 1
            }
        }
    }

    /// Decoded text, for what is not secret (an error's words); a malformed escape stays as is.
    static func decodeText(_ escaped: UnsafeRawBufferPointer) -> String {
        guard let bytes = decode(escaped) else { return String(decoding: escaped, as: UTF8.self) }
        return bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
