import FoundationEssentials

extension FuzzEntryPoints {
    /// What the sync engine parses from etcd (untrusted) and from its journal: etcd's JSON
    /// answers and watch lines, a change as opened from an item's value, an item record's
    /// header and path to its batch's signed root, an opened member list, the sync state, an
    /// invitation code. A change re-encodes to what it decoded from.
    /// Every revision parsed meets the engine's arithmetic against a cursor taken from the
    /// input's first bytes (what a hostile answer stored by an older version could have left).
    public static func syncRecords(_ bytes: [UInt8]) -> Bool {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        var parsed = false
        let cursor = bytes.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        func meet(_ revisions: [Int64]) {
            for revision in revisions {
                precondition((0...EtcdRevision.ceiling).contains(revision), "a parsed revision out of range")
                _ = try? EtcdRevision.check(revision, after: cursor)
                _ = try? EtcdRevision.check(revision, after: max(0, cursor))
                precondition(EtcdRevision.after(revision) > revision && EtcdRevision.after(cursor) > 0, "a next revision that is not ahead")
            }
            _ = EtcdRevision.tally(UInt32(truncatingIfNeeded: cursor), adding: revisions.count &* Int(truncatingIfNeeded: cursor))
        }
        if let range = try? decoder.decode(EtcdJSON.Range.self, from: data) {
            meet([try? range.header.number()].compactMap { $0 })
            meet(((try? EtcdJSON.keyValues(range.kvs)) ?? []).flatMap { [$0.modRevision, $0.createRevision] })
            parsed = true
        }
        if let txn = try? decoder.decode(EtcdJSON.Txn.self, from: data) {
            meet(((try? EtcdJSON.keyValues(txn.responses?.first?.response_range?.kvs)) ?? []).map(\.modRevision))
        }
        if let line = try? decoder.decode(EtcdJSON.WatchLine.self, from: data) {
            meet(((try? EtcdJSON.keyValues(line.result?.events?.compactMap(\.kv))) ?? []).map(\.modRevision))
            meet([EtcdRevision.parse(line.result?.compact_revision)].compactMap { $0 })
        }
        _ = try? decoder.decode(EtcdJSON.Failure.self, from: data)
        let secret = SecretBytes(bytes)
        if let change = SyncChange.decode(secret) {
            let again = SyncChange.decode(change.encoded(withValue: true))
            precondition(
                again?.clock == change.clock && again?.origin == change.origin && again?.deleted == change.deleted && again?.value == change.value,
                "a change does not round-trip")
            parsed = true
        }
        if let state = SyncState.decode(secret) {
            meet([min(state.cursor, EtcdRevision.ceiling)])
            parsed = true
        }
        if bytes.withUnsafeBytes({ SyncRecords.decodeMembers($0) }) != nil { parsed = true }
        _ = SyncRecords.membersEpoch(bytes)
        _ = SyncRecords.itemHeader(bytes)
        if let (path, start) = BatchSignature.decode(bytes, end: bytes.count) {
            precondition(BatchSignature.encode(path) == Array(bytes[start...]), "a record's path to its batch's root does not round-trip")
            _ = BatchSignature.root(of: [UInt8](repeating: 0, count: BatchSignature.nodeSize), path: path)
            parsed = true
        }
        _ = try? InvitationCode(parsing: String(decoding: bytes, as: UTF8.self))
        return parsed
    }
}
