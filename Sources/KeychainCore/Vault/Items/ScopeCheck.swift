#if canImport(Glibc)
    import Glibc
#endif

/// Whether a decrypted attribute record lies in the scope a query asked for (access group,
/// service or server, synchronizable; absent ones as their empty values), byte for byte as
/// ``RecordCoding/scopeMessage(_:_:)`` encodes them, read off the record's bytes.
///
/// A row found by its scope digest must be checked against its authenticated attributes:
/// the digest is a column anyone with the file can edit. Comparing the record's own entries
/// with the query's says the same as recomputing the HMAC, and decodes nothing: a listing
/// made a string of each row's service and access group only to compare them.
struct ScopeCheck {
    private struct Entry {
        let tag: UInt8
        /// The bytes the record's entry for this field must hold (``AttributeField/encode(_:)``).
        let expected: [UInt8]
        /// Whether a record without the field is in scope (the query asks for its empty value).
        let absentMatches: Bool
    }

    /// What a row found by a scope digest its attributes do not lie in means: its scope column
    /// was changed, or the scope index points it there. Reads refuse it rather than pass it
    /// over: the row it stands in for is missing from the answer.
    static let outOfScope = StoreError.tampered("an item's scope digest does not match its attributes (moved into another scope, or the scope index points at another row)")

    private let entries: [Entry]
    /// The entries' tags as bits (tags are below 32), to pass over the other fields at once.
    private let tags: UInt32

    /// The check for rows of `itemClass` in the scope `wanted` names.
    init(_ itemClass: ItemClass, _ wanted: Attributes) {
        let normalized = wanted.normalizedIdentity(for: itemClass)
        let empty = Attributes().normalizedIdentity(for: itemClass)
        entries = RecordCoding.scopeFields(itemClass).map { field in
            let expected = field.encode(normalized) ?? []
            return Entry(tag: field.rawValue, expected: expected, absentMatches: expected == field.encode(empty) ?? [])
        }
        tags = entries.reduce(0) { $0 | 1 << UInt32($1.tag) }
    }

    /// Whether `record` (an attribute encoding, without its padding) is in scope; false too
    /// when it is malformed, which the decoding that follows reports as such.
    func holds(in record: UnsafeRawBufferPointer) -> Bool {
        var seen: UInt32 = 0
        var reader = ByteReader(record)
        while reader.remaining > 0 {
            guard let tag = reader.u8(), let length = reader.u32(), let value = reader.slice(Int(length)) else { return false }
            guard tag < 32, tags & (1 << UInt32(tag)) != 0, let index = entries.firstIndex(where: { $0.tag == tag }) else { continue }
            let expected = entries[index].expected
            guard expected.count == value.count,
                value.isEmpty || expected.withUnsafeBytes({ memcmp($0.baseAddress!, value.baseAddress!, value.count) == 0 })
            else { return false }
            seen |= 1 << index
        }
        return entries.indices.allSatisfy { seen & (1 << $0) != 0 || entries[$0].absentMatches }
    }
}
