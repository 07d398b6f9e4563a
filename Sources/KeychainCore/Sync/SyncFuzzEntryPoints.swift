import FoundationEssentials

extension FuzzEntryPoints {
    /// What the sync engine parses from etcd (untrusted) and from its journal: etcd's JSON
    /// answers and watch lines, a change as opened from an item's value, an opened member
    /// list, the sync state, an invitation code. A change re-encodes to what it decoded from.
    public static func syncRecords(_ bytes: [UInt8]) -> Bool {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        var parsed = false
        if let range = try? decoder.decode(EtcdJSON.Range.self, from: data) {
            _ = try? range.header.number()
            _ = try? EtcdJSON.keyValues(range.kvs)
            parsed = true
        }
        if let txn = try? decoder.decode(EtcdJSON.Txn.self, from: data) { _ = try? EtcdJSON.keyValues(txn.responses?.first?.response_range?.kvs) }
        if let line = try? decoder.decode(EtcdJSON.WatchLine.self, from: data) { _ = try? EtcdJSON.keyValues(line.result?.events?.compactMap(\.kv)) }
        _ = try? decoder.decode(EtcdJSON.Failure.self, from: data)
        let secret = SecretBytes(bytes)
        if let change = SyncChange.decode(secret) {
            let again = SyncChange.decode(change.encoded(withValue: true))
            precondition(
                again?.clock == change.clock && again?.origin == change.origin && again?.deleted == change.deleted && again?.value == change.value,
                "a change does not round-trip")
            parsed = true
        }
        if SyncState.decode(secret) != nil { parsed = true }
        if bytes.withUnsafeBytes({ SyncRecords.decodeMembers($0) }) != nil { parsed = true }
        _ = SyncRecords.membersEpoch(bytes)
        _ = try? InvitationCode(parsing: String(decoding: bytes, as: UTF8.self))
        return parsed
    }
}
