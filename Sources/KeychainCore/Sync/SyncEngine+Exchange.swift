import Dispatch
internal import KeychainSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a round exchanges with etcd: the member list followed, the outbox sent by
/// compare-and-swap, what changed applied newest-wins.
extension SyncEngine {
    /// Sends the outbox, each change by compare-and-swap against what etcd holds: written
    /// when the key is new or holds an older change; left when etcd holds a newer one (the
    /// pull applies it) or this very change (a write that timed out and committed later).
    /// Changes go in transactions of up to ``transactionSize``, each put conditional on the
    /// revision seen, the rows of one item (``SyncUnit``) always in the same one; a transaction
    /// that loses a race is retried one unit at a time.
    ///
    /// Each transaction also compares the epoch (``epochGuards(_:)``): a change is sealed only
    /// under the epoch it has confirmed current, so a device that has not yet followed a
    /// removal never writes under the removed device's key. When the epoch moved, the list is
    /// followed (everything is sealed again) and the rest sent under the new one.
    /// A device that met a forked history sends nothing.
    func push(_ state: inout SyncState, _ revisions: inout SyncRevisions, client: EtcdClient) throws(SyncError) -> Int {
        if state.alarm?.kind == .forkedHistory { throw .forked }
        var sent = 0
        for _ in 0..<8 {
            var epochMoved = false
            sent += try push(&state, &revisions, client: client, epochMoved: &epochMoved)
            guard epochMoved else { return sent }
            try refreshMembership(&state, client: client)
        }
        return sent
    }

    /// The next epoch's list key: while it does not exist, the current epoch is current.
    static func nextEpochKey(_ state: SyncState) -> [UInt8] { SyncRecords.membersKey(state.prefix, epoch: state.epoch + 1) }

    /// What every write sealed under this device's epoch compares in its own transaction: no
    /// list of the next epoch exists, and the epoch head is the one this device confirmed. A
    /// new epoch moves the head; a list deleted after that cannot move it back (a revision
    /// only grows), so a device that has not followed a removal writes nothing even when the
    /// removed device deleted the new epoch's list before it looked.
    static func epochGuards(_ state: SyncState) -> [EtcdClient.Guard] {
        [EtcdClient.Guard(key: nextEpochKey(state), modRevision: 0), EtcdClient.Guard(key: SyncRecords.headKey(state.prefix), modRevision: state.headRevision)]
    }

    /// After a write's compare failed: whether it was the epoch's (``epochGuards(_:)``), which
    /// the caller follows, or confirms, before it seals again.
    static func epochMoved(_ state: SyncState, client: EtcdClient) throws(SyncError) -> Bool {
        if try !client.range(nextEpochKey(state)).kvs.isEmpty { return true }
        return (try client.range(SyncRecords.headKey(state.prefix)).kvs.first?.modRevision ?? 0) != state.headRevision
    }

    private func push(_ state: inout SyncState, _ revisions: inout SyncRevisions, client: EtcdClient, epochMoved: inout Bool) throws(SyncError) -> Int {
        var sent = 0
        // What etcd holds at each key, read once for the whole group when the outbox is large.
        var current: [[UInt8]: EtcdClient.KeyValue] = [:]
        var readWholeGroup = false
        let signers = SyncRecords.signers(state)
        while true {
            let outbox = try Self.onVault(vault) { (open) throws(StoreError) in try open.outbox(limit: Self.outboxBatch) }
            revisions.waitingCount = outbox.waiting
            guard !outbox.entries.isEmpty else { return sent }
            var keys: [[UInt8]] = []
            for entry in outbox.entries { keys.append(try SyncRecords.itemKey(entry.change, state: state)) }
            let sealed = try SyncRecords.sealItems(zip(outbox.entries, keys).map { ($0.change, $1) }, state: state)
            let outgoing = zip(outbox.entries, zip(keys, sealed)).map { Outgoing(entry: $0, key: $1.0, sealed: $1.1) }
            // A large outbox: one read of the whole group; a few changes: a read of each key
            // whose revision this engine does not know (a known one goes straight to its
            // compare-and-swap, which fails if it moved).
            if outgoing.count > 16, !readWholeGroup {
                let prefix = SyncRecords.itemsPrefix(state)
                for kv in try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs { current[kv.key] = kv }
                readWholeGroup = true
            } else if !readWholeGroup {
                for change in outgoing where revisions.revision(of: change.key) == nil { current[change.key] = try client.range(change.key).kvs.first }
            }
            var done: [OutboxEntry] = []
            var writes: [Outgoing] = []
            for change in outgoing {
                if change.isSuperseded(by: current[change.key], state: state, signers: signers, verified: verified) { done.append(change.entry) } else { writes.append(change) }
            }
            for chunk in Self.transactions(writes) {
                let known = revisions
                let written = try client.putAll(
                    chunk.map { ($0.key, $0.sealed, current[$0.key]?.modRevision ?? known.revision(of: $0.key) ?? 0) }, guards: Self.epochGuards(state))
                if written.succeeded {
                    sent += chunk.count
                    done += chunk.map(\.entry)
                    revisions.noteOwn(chunk.map(\.key), revision: written.revision)
                    for change in chunk { current[change.key] = nil }
                    continue
                }
                for unit in SyncUnit.grouped(chunk, key: { SyncUnit.key(of: $0.entry.change.attributes) }) {
                    for change in unit { current[change.key] = nil }
                    let outcome = try pushUnit(unit, state: state, signers: signers, &revisions, client: client)
                    sent += outcome.sent
                    done += outcome.done
                    if outcome.epochMoved {
                        epochMoved = true
                        break
                    }
                }
                if epochMoved { break }
            }
            if epochMoved {
                try Self.onVault(vault) { (open) throws(StoreError) in try open.acknowledge(done) }
                return sent
            }
            try Self.onVault(vault) { (open) throws(StoreError) in try open.acknowledge(done) }
            if done.isEmpty || (outbox.entries.count < Self.outboxBatch && outbox.pending <= outbox.entries.count) { return sent }
        }
    }

    /// One change of the outbox, sealed for its key.
    struct Outgoing {
        var entry: OutboxEntry
        var key: [UInt8]
        var sealed: [UInt8]

        /// Whether etcd holds this change already (sealed under the current epoch), or a newer
        /// one, signed by a member.
        func isSuperseded(by held: EtcdClient.KeyValue?, state: SyncState, signers: [[UInt8]: [UInt8]], verified: BatchSignature.Verified) -> Bool {
            guard let held, let remote = SyncRecords.openItem(held.value, at: key, state: state, signers: signers, verified: verified) else { return false }
            if entry.change.isNewer(thanClock: remote.change.clock, origin: remote.change.origin) { return false }
            return remote.epoch == state.epoch || remote.change.isNewer(thanClock: entry.change.clock, origin: entry.change.origin)
        }
    }

    /// How many outbox entries a push reads (and acknowledges, in one vault transaction) at a time.
    static let outboxBatch = 1_024
    /// Changes per transaction: etcd takes up to 128 operations in each of a transaction's
    /// compare and success lists (`--max-txn-ops`), and two compares are the epoch's.
    static let transactionSize = 128 - 2

    enum PushOutcome { case written, superseded, contended, epochMoved }

    /// One change by compare-and-swap, re-reading after each lost race (a few times; then it
    /// stays in the outbox for the next round).
    func pushOne(_ change: Outgoing, state: SyncState, signers: [[UInt8]: [UInt8]], _ revisions: inout SyncRevisions, client: EtcdClient) throws(SyncError) -> PushOutcome {
        var current = try client.range(change.key).kvs.first
        for _ in 0..<8 {
            if change.isSuperseded(by: current, state: state, signers: signers, verified: verified) { return .superseded }
            let written = try client.put(change.key, change.sealed, ifModRevision: current?.modRevision ?? 0, guards: Self.epochGuards(state))
            if written.succeeded {
                revisions.noteOwn([change.key], revision: written.revision)
                return .written
            }
            if try Self.epochMoved(state, client: client) { return .epochMoved }
            current = written.current
        }
        return .contended
    }

    /// Applies every item changed on etcd since the cursor, newest wins, with the new cursor
    /// in the same transaction. A cluster whose revision went back (wiped, replaced) gets
    /// everything this device has again.
    func pull(_ state: inout SyncState, _ revisions: inout SyncRevisions, client: EtcdClient) throws(SyncError) -> ApplyResult {
        let prefix = SyncRecords.itemsPrefix(state)
        var answer = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix), minModRevision: EtcdRevision.after(state.cursor))
        if answer.revision < state.cursor {
            try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() }
            state.cursor = 0
            _ = try push(&state, &revisions, client: client)
            answer = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix))
        }
        // It reads again every change held back for a class key: they come after the cursor.
        revisions.heldFrom = nil
        // This engine's own writes of this round need no opening: they hold what the vault has.
        let own = revisions
        return try apply(answer.kvs.filter { !own.isOwn($0.modRevision) }, upTo: answer.revision, &state, &revisions)
    }

    /// Each value opened (``SyncRecords/openItem(_:at:state:signers:verified:)``), on every
    /// core: each batch's signature is checked once, first, then the records are opened.
    static func openAll(
        _ kvs: [EtcdClient.KeyValue], state: SyncState, signers: [[UInt8]: [UInt8]], verified: BatchSignature.Verified
    ) -> [(change: SyncChange, epoch: UInt32)?] {
        let workers = kvs.count < 64 ? 1 : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        if !state.withoutSignatures {
            // The records of one batch carry one signature: one record of each is checked here.
            var seen = Set<ArraySlice<UInt8>>()
            let claims = kvs.filter { seen.insert($0.value.suffix(Ed25519.signatureSize)).inserted }.compactMap {
                SyncRecords.batchClaim($0.value, at: $0.key, state: state, signers: signers)
            }
            DispatchQueue.concurrentPerform(iterations: min(workers, max(1, claims.count))) { worker in
                for index in stride(from: worker, to: claims.count, by: workers) {
                    _ = verified.isValid(claims[index].signature, root: claims[index].root, publicKey: claims[index].publicKey)
                }
            }
        }
        let collected = VisibleMutex([(change: SyncChange, epoch: UInt32)?](repeating: nil, count: kvs.count))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let mine = stride(from: worker, to: kvs.count, by: workers).map { index in
                (index, SyncRecords.openItem(kvs[index].value, at: kvs[index].key, state: state, signers: signers, verified: verified))
            }
            collected.withLock { opened in for (index, result) in mine { opened[index] = result } }
        }
        return collected.withLock { $0 }
    }

    /// Opens what etcd holds at each key and applies it, newest wins, with the cursor advanced to
    /// `revision` in the same transaction. A revision further ahead than a cluster moves is
    /// refused before anything is applied: stored as the cursor, it would skip every change.
    func apply(_ kvs: [EtcdClient.KeyValue], upTo revision: Int64, _ state: inout SyncState, _ revisions: inout SyncRevisions) throws(SyncError) -> ApplyResult {
        try EtcdRevision.check(revision, after: state.cursor)
        var changes: [SyncChange] = []
        var changeRevisions: [Int64] = []
        var refused = 0
        var retired = false
        var refusedKeys = Set<[UInt8]>()
        let signers = SyncRecords.signers(state)
        let opened = Self.openAll(kvs, state: state, signers: signers, verified: verified)
        for (kv, opened) in zip(kvs, opened) {
            revisions.remember(kv.key, revision: kv.modRevision)
            // Refused: what does not open, is signed by no current member, opens to an item
            // that belongs at another key, or was sealed under a retired epoch after this
            // device moved on from it (a removed device's key, or a replay).
            guard let opened, (try? SyncRecords.itemKey(opened.change, state: state, epoch: opened.epoch)) == kv.key,
                opened.epoch == state.epoch || (opened.epoch < state.epoch && kv.modRevision <= state.epochSince)
            else {
                refused += 1
                refusedKeys.insert(kv.key)
                // Under a retired epoch: deleted by this device's next sweep.
                if let header = SyncRecords.itemHeader(kv.value), header.epoch < state.epoch { state.retiredRecords = true }
                continue
            }
            if opened.epoch != state.epoch { retired = true }
            changes.append(opened.change)
            changeRevisions.append(kv.modRevision)
        }
        changes = holdLocked(changes, at: changeRevisions, &revisions)
        state.cursor = max(state.cursor, min(revision, (revisions.heldFrom ?? Int64.max) - 1))
        state.lastPull = SyncChange.nowMilliseconds()
        state.refused = EtcdRevision.tally(state.refused, adding: refused)
        let encoded = state.encoded()
        var result = try Self.onVault(vault) { (open) throws(StoreError) in try open.applyReceived(changes, state: encoded) }
        result.refused += refused
        if revisions.collectsArrivals, revisions.arrived.count < 100_000 { revisions.arrived += result.arrived }
        // A current member's change under a retired epoch: this device seals it again too,
        // so it outlives the old records.
        if retired { try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() } }
        // A refused value where one of this device's items lives took the place of the real
        // one (moved there, forged): this device sends its own again.
        if !refusedKeys.isEmpty {
            let current = state
            _ = try Self.onVault(vault) { (open) throws(StoreError) in
                try open.resend { change in (try? SyncRecords.itemKey(change, state: current)).map { refusedKeys.contains($0) } ?? false }
            }
        }
        return result
    }

    /// Puts back in the outbox what this device sent and etcd no longer holds (dropped):
    /// looked for only when etcd holds fewer items than this device has sent.
    func resendDropped(_ state: SyncState, client: EtcdClient) throws(SyncError) {
        let prefix = SyncRecords.itemsPrefix(state)
        let end = EtcdClient.rangeEnd(ofPrefix: prefix)
        guard try client.keys(prefix, rangeEnd: end, keysOnly: false).count < (try Self.onVault(vault) { (open) throws(StoreError) in try open.journalCount() }) else {
            return
        }
        let held = Set(try client.keys(prefix, rangeEnd: end, keysOnly: true).keys)
        _ = try Self.onVault(vault) { (open) throws(StoreError) in
            try open.resend { change in (try? SyncRecords.itemKey(change, state: state)).map { !held.contains($0) } ?? false }
        }
    }

    /// Deletes the records sealed under retired epochs once this device has sealed again
    /// everything it holds (its outbox empty): a removed device's key opens none of what
    /// stays. Each delete is conditional on the record being the one read.
    func deleteRetiredRecords(_ state: inout SyncState, client: EtcdClient) throws(SyncError) {
        guard state.retiredRecords, try outboxLength() == 0 else { return }
        let prefix = SyncRecords.itemsPrefix(state)
        for kv in try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs {
            guard let header = SyncRecords.itemHeader(kv.value), header.epoch < state.epoch else { continue }
            _ = try client.delete(kv.key, ifModRevision: kv.modRevision)
        }
        state.retiredRecords = false
        try save(state)
    }
}
