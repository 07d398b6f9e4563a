import FoundationEssentials

/// How a Secret Service item's attributes and content type are kept in its vault row's
/// `generic` attribute (sealed with the row): a version byte, the content type, then each
/// (name, value) pair in name order, every string as a big-endian u32 length and its UTF-8.
/// Version 2 adds, after the pairs, the item's `Created` and `Modified` as another provider
/// showed them (big-endian u64 seconds each): what `migrate --foreign` keeps of an item it
/// brings in. Items the daemon makes are written in version 1.
enum ItemRecordCoding {
    private static let version: UInt8 = 1
    private static let versionWithDates: UInt8 = 2

    /// An imported item's dates as its source showed them, in seconds since the epoch.
    struct KeptDates: Equatable {
        var created: UInt64
        var modified: UInt64
    }

    static func encode(attributes: [String: String], contentType: String, dates: KeptDates? = nil) -> Data {
        var out: [UInt8] = [dates == nil ? version : versionWithDates]
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
        if let dates {
            withUnsafeBytes(of: dates.created.bigEndian) { out.append(contentsOf: $0) }
            withUnsafeBytes(of: dates.modified.bigEndian) { out.append(contentsOf: $0) }
        }
        return Data(out)
    }

    /// The attributes and content type; nil for bytes this coding did not write (which, in a
    /// row that authenticated, means a bug or another program's row).
    static func decode(_ data: Data) -> (attributes: [String: String], contentType: String, dates: KeptDates?)? {
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
        guard let first = bytes.first, first == version || first == versionWithDates else { return nil }
        offset = 1
        guard let contentType = take(), offset + 4 <= bytes.count else { return nil }
        let count = Int(bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        offset += 4
        var attributes: [String: String] = [:]
        for _ in 0..<count {
            guard let name = take(), let value = take(), attributes.updateValue(value, forKey: name) == nil else { return nil }
        }
        guard first == versionWithDates else { return offset == bytes.count ? (attributes, contentType, nil) : nil }
        guard offset + 16 == bytes.count else { return nil }
        let number = { (start: Int) in bytes[start..<start + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        return (attributes, contentType, KeptDates(created: number(offset), modified: number(offset + 8)))
    }

    /// The vault service string of one attribute pair's index rows in `collection`: unambiguous
    /// (the name's length comes first), so that two different pairs never share a row set.
    /// The vault keeps it only as a digest under its lookup key and sealed in the row.
    static func pairScope(collection: String, name: String, value: String) -> String {
        "\(collection)/\(name.utf8.count):\(name)=\(value)"
    }
}
