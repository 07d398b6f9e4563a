import FoundationEssentials

/// How a Secret Service item's attributes and content type are kept in its vault row's
/// `generic` attribute (sealed with the row): a version byte, the content type, then each
/// (name, value) pair in name order, every string as a big-endian u32 length and its UTF-8.
enum ItemRecordCoding {
    private static let version: UInt8 = 1

    static func encode(attributes: [String: String], contentType: String) -> Data {
        var out: [UInt8] = [version]
        func put(_ text: String) {
            let bytes = Array(text.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: bytes)
        }
        put(contentType)
        withUnsafeBytes(of: UInt32(attributes.count).bigEndian) { out.append(contentsOf: $0) }
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            put(name)
            put(value)
        }
        return Data(out)
    }

    /// The attributes and content type; nil for bytes this coding did not write (which, in a
    /// row that authenticated, means a bug or another program's row).
    static func decode(_ data: Data) -> (attributes: [String: String], contentType: String)? {
        let bytes = [UInt8](data)
        var offset = 0
        func take() -> String? {
            guard offset + 4 <= bytes.count else { return nil }
            let length = Int(bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            offset += 4
            guard length <= bytes.count - offset else { return nil }
            defer { offset += length }
            return String(validating: bytes[offset..<offset + length], as: UTF8.self)
        }
        guard bytes.first == version else { return nil }
        offset = 1
        guard let contentType = take(), offset + 4 <= bytes.count else { return nil }
        let count = Int(bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        offset += 4
        var attributes: [String: String] = [:]
        for _ in 0..<count {
            guard let name = take(), let value = take(), attributes.updateValue(value, forKey: name) == nil else { return nil }
        }
        return offset == bytes.count ? (attributes, contentType) : nil
    }

    /// The vault service string of one attribute pair's index rows in `collection`: unambiguous
    /// (the name's length comes first), so that two different pairs never share a row set.
    /// The vault keeps it only as a digest under its lookup key and sealed in the row.
    static func pairScope(collection: String, name: String, value: String) -> String {
        "\(collection)/\(name.utf8.count):\(name)=\(value)"
    }
}
