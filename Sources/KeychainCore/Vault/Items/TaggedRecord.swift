/// The ledger's stored records (format 2's ledger, format 3's root and group records): a body
/// followed by the ledger key's HMAC over a context (a label, the vault id, and whatever else
/// binds the record: a group's number and generation) and the body. One place seals and opens
/// them, so every record is checked the same way.
enum TaggedRecord {
    /// `body` followed by its tag under `key`.
    static func seal(_ body: [UInt8], context: [UInt8], key: HMACKey) -> [UInt8] {
        body + key.authenticationCode(context + body)
    }

    /// The body of `bytes`, or nil unless it is exactly `bodySize` bytes and a tag that verifies
    /// under `key` for `context` (altered, written under other keys, or bound to another
    /// context: another group, an older generation).
    static func open(_ bytes: [UInt8], bodySize: Int, context: [UInt8], key: HMACKey) -> [UInt8]? {
        guard bytes.count == bodySize + Digest.size else { return nil }
        let body = Array(bytes[0..<bodySize])
        guard Digest.equal(key.authenticationCode(context + body), Array(bytes[bodySize...])) else { return nil }
        return body
    }
}
