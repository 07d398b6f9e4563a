/// What a round exchanges with etcd: the member list followed, the outbox sent by
/// compare-and-swap, what changed applied newest-wins.
extension SyncEngine {
    /// Follows the member list to a newer epoch: its key comes in a share sealed to this
    /// device; a newer epoch with no share for it means it was removed. A cluster that lost
    /// the list (wiped) gets it back from its devices, each adding itself.
    func refreshMembership(_ state: inout SyncState, client: EtcdClient) throws(SyncError) {
        let me = SyncRecords.Member(deviceID: state.deviceID, publicKey: state.publicKey, name: state.deviceName)
        guard let list = try client.range(SyncRecords.membersKey(state.prefix)).kvs.first else {
            _ = try client.put(
                SyncRecords.membersKey(state.prefix), try SyncRecords.sealMembers([me], epoch: state.epoch, key: state.epochKey, prefix: state.prefix),
                ifModRevision: 0)
            return
        }
        guard let epoch = SyncRecords.membersEpoch(list.value) else { throw .tampered("the member list has no epoch") }
        // An older list (a cluster refilled from an old copy): this device's epoch stands.
        guard epoch >= state.epoch else { return }
        if epoch == state.epoch {
            var members = try SyncRecords.openMembers(list.value, key: state.epochKey, prefix: state.prefix)
            guard !members.contains(where: { $0.deviceID == state.deviceID }) else { return }
            // A removal always starts a new epoch: missing from a list of its own epoch, this
            // device was lost with a wiped cluster (or a list from before it joined came back).
            members.append(me)
            let sealed = try SyncRecords.sealMembers(members, epoch: epoch, key: state.epochKey, prefix: state.prefix)
            _ = try client.put(SyncRecords.membersKey(state.prefix), sealed, ifModRevision: list.modRevision)
            return
        }
        var changed = false
        while state.epoch < epoch {
            let next = state.epoch + 1
            guard let share = try client.range(SyncRecords.shareKey(state.prefix, epoch: next, device: state.deviceID)).kvs.first else {
                throw .removed
            }
            guard let key = SyncRecords.openShare(share.value, epoch: next, state: state, previousKey: state.epochKey) else {
                throw .tampered("the group key of epoch \(next) does not open or was not made by a member")
            }
            state.epochKeys[next] = key
            state.epoch = next
            changed = true
        }
        let members = try SyncRecords.openMembers(list.value, key: state.epochKey, prefix: state.prefix)
        guard members.contains(where: { $0.deviceID == state.deviceID }) else { throw .removed }
        if changed { try save(state) }
    }

    /// Sends the outbox, each change by compare-and-swap against what etcd holds: written
    /// when the key is new or holds an older change; left when etcd holds a newer one (the
    /// pull applies it) or this very change (a write that timed out and committed later).
    /// Changes go in transactions of up to 128, each put conditional on the revision seen; a
    /// transaction that loses a race is retried one change at a time.
    func push(_ state: inout SyncState, client: EtcdClient) throws(SyncError) -> Int {
        var sent = 0
        // What etcd holds at each key, read once for the whole group when the outbox is large.
        var current: [[UInt8]: EtcdClient.KeyValue] = [:]
        var readWholeGroup = false
        while true {
            let outbox = try Self.onVault(vault) { (open) throws(StoreError) in try open.outbox(limit: Self.outboxBatch) }
            guard !outbox.entries.isEmpty else { return sent }
            var outgoing: [Outgoing] = []
            for entry in outbox.entries {
                let key = try SyncRecords.itemKey(entry.change, state: state)
                outgoing.append(Outgoing(entry: entry, key: key, sealed: try SyncRecords.sealItem(entry.change, at: key, state: state)))
            }
            // A large outbox: one read of the whole group; a few changes: a read of each key
            // whose revision this engine does not know (a known one goes straight to its
            // compare-and-swap, which fails if it moved).
            if outgoing.count > 16, !readWholeGroup {
                let prefix = SyncRecords.itemsPrefix(state)
                for kv in try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs { current[kv.key] = kv }
                readWholeGroup = true
            } else if !readWholeGroup {
                for change in outgoing where knownRevisions[change.key] == nil { current[change.key] = try client.range(change.key).kvs.first }
            }
            var done: [OpenVault.OutboxEntry] = []
            var writes: [Outgoing] = []
            for change in outgoing {
                if change.isSuperseded(by: current[change.key], state: state) { done.append(change.entry) } else { writes.append(change) }
            }
            func seen(_ key: [UInt8]) -> Int64 { current[key]?.modRevision ?? knownRevisions[key] ?? 0 }
            var start = 0
            while start < writes.count {
                let chunk = Array(writes[start..<min(start + Self.transactionSize, writes.count)])
                start += chunk.count
                let written = try client.putAll(chunk.map { ($0.key, $0.sealed, seen($0.key)) })
                if written.succeeded {
                    sent += chunk.count
                    done += chunk.map(\.entry)
                    noteOwn(chunk.map(\.key), revision: written.revision)
                    for change in chunk { current[change.key] = nil }
                    continue
                }
                for change in chunk {
                    current[change.key] = nil
                    switch try pushOne(change, state: state, client: client) {
                    case .written:
                        sent += 1
                        done.append(change.entry)
                    case .superseded: done.append(change.entry)
                    case .contended: break
                    }
                }
            }
            try Self.onVault(vault) { (open) throws(StoreError) in try open.acknowledge(done) }
            if done.isEmpty || (outbox.entries.count < Self.outboxBatch && outbox.pending <= outbox.entries.count) { return sent }
        }
    }

    /// One change of the outbox, sealed for its key.
    struct Outgoing {
        var entry: OpenVault.OutboxEntry
        var key: [UInt8]
        var sealed: [UInt8]

        /// Whether etcd holds this change already, or a newer one.
        func isSuperseded(by held: EtcdClient.KeyValue?, state: SyncState) -> Bool {
            guard let held, let remote = SyncRecords.openItem(held.value, at: key, state: state) else { return false }
            return !entry.change.isNewer(thanClock: remote.clock, origin: remote.origin)
        }
    }

    /// How many outbox entries a push reads (and acknowledges, in one vault transaction) at a time.
    static let outboxBatch = 1_024
    /// Changes per transaction: etcd takes up to 128 operations in each of a transaction's
    /// compare and success lists (`--max-txn-ops`).
    static let transactionSize = 128

    enum PushOutcome { case written, superseded, contended }

    /// Notes this engine's own write at `revision` to `keys`.
    func noteOwn(_ keys: [[UInt8]], revision: Int64) {
        for key in keys { remember(key, revision: revision) }
        if ownRevisions.count >= 10_000 { ownRevisions.removeAll(keepingCapacity: true) }
        ownRevisions.insert(revision)
    }

    /// One change by compare-and-swap, re-reading after each lost race (a few times; then it
    /// stays in the outbox for the next round).
    func pushOne(_ change: Outgoing, state: SyncState, client: EtcdClient) throws(SyncError) -> PushOutcome {
        var current = try client.range(change.key).kvs.first
        for _ in 0..<8 {
            if change.isSuperseded(by: current, state: state) { return .superseded }
            let written = try client.put(change.key, change.sealed, ifModRevision: current?.modRevision ?? 0)
            if written.succeeded {
                noteOwn([change.key], revision: written.revision)
                return .written
            }
            current = written.current
        }
        return .contended
    }

    /// Applies every item changed on etcd since the cursor, newest wins, with the new cursor
    /// in the same transaction. A cluster whose revision went back (wiped, replaced) gets
    /// everything this device has again.
    func pull(_ state: inout SyncState, client: EtcdClient) throws(SyncError) -> OpenVault.ApplyResult {
        let prefix = SyncRecords.itemsPrefix(state)
        var answer = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix), minModRevision: EtcdRevision.after(state.cursor))
        if answer.revision < state.cursor {
            try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() }
            state.cursor = 0
            _ = try push(&state, client: client)
            answer = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix))
        }
        return try apply(answer.kvs, upTo: answer.revision, &state)
    }

    /// Opens what etcd holds at each key (refusing what does not open, or opens to an item
    /// that belongs at another key) and applies it, newest wins, with the cursor advanced to
    /// `revision` in the same transaction. A revision further ahead than a cluster moves is
    /// refused before anything is applied: stored as the cursor, it would skip every change.
    func apply(_ kvs: [EtcdClient.KeyValue], upTo revision: Int64, _ state: inout SyncState) throws(SyncError) -> OpenVault.ApplyResult {
        try EtcdRevision.check(revision, after: state.cursor)
        var changes: [SyncChange] = []
        var refused = 0
        for kv in kvs {
            remember(kv.key, revision: kv.modRevision)
            guard let change = SyncRecords.openItem(kv.value, at: kv.key, state: state),
                (try? SyncRecords.itemKey(change, state: state)) == kv.key
            else {
                refused += 1
                continue
            }
            changes.append(change)
        }
        state.cursor = max(state.cursor, revision)
        state.lastPull = SyncChange.nowMilliseconds()
        state.refused = EtcdRevision.tally(state.refused, adding: refused)
        let encoded = state.encoded()
        var result = try Self.onVault(vault) { (open) throws(StoreError) in try open.applyReceived(changes, state: encoded) }
        result.refused += refused
        return result
    }

    /// Notes the revision etcd gave a key (bounded: forgotten whole when large).
    func remember(_ key: [UInt8], revision: Int64) {
        if knownRevisions.count >= 100_000 { knownRevisions.removeAll(keepingCapacity: true) }
        knownRevisions[key] = revision
    }
}
