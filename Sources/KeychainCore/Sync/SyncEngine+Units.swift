/// The push's side of ``SyncUnit``: an item's rows go to etcd in one transaction, so that a
/// sender stopped at any point of a push (killed, cut off) has sent each item whole or not at all.
extension SyncEngine {
    /// `writes` cut into transactions of at most ``transactionSize`` changes, the changes of
    /// one unit never in two (a unit larger than a transaction, which no served item is, goes
    /// in transactions of its own).
    static func transactions(_ writes: [Outgoing]) -> [[Outgoing]] {
        var chunks: [[Outgoing]] = []
        var chunk: [Outgoing] = []
        for unit in SyncUnit.grouped(writes, key: { SyncUnit.key(of: $0.entry.change.attributes) }) {
            if chunk.count + unit.count > transactionSize, !chunk.isEmpty {
                chunks.append(chunk)
                chunk = []
            }
            if unit.count > transactionSize {
                var start = 0
                while start < unit.count {
                    chunks.append(Array(unit[start..<min(start + transactionSize, unit.count)]))
                    start += transactionSize
                }
                continue
            }
            chunk += unit
        }
        if !chunk.isEmpty { chunks.append(chunk) }
        return chunks
    }

    /// One unit by compare-and-swap, all its changes in one transaction, re-reading after each
    /// lost race (a few times; then it stays in the outbox for the next round). A change etcd
    /// holds already, or holds a newer one of, is done without a write. Like every write of the
    /// push, the transaction compares the epoch (``epochGuards(_:)``); `epochMoved` says it
    /// moved, so that the caller follows it and seals the unit again.
    func pushUnit(
        _ unit: [Outgoing], state: SyncState, signers: [[UInt8]: [UInt8]], _ revisions: inout SyncRevisions, client: EtcdClient
    ) throws(SyncError) -> (sent: Int, done: [OutboxEntry], epochMoved: Bool) {
        if unit.count == 1 || unit.count > Self.transactionSize {
            var sent = 0
            var done: [OutboxEntry] = []
            for change in unit {
                switch try pushOne(change, state: state, signers: signers, &revisions, client: client) {
                case .written:
                    sent += 1
                    done.append(change.entry)
                case .superseded: done.append(change.entry)
                case .contended: break
                case .epochMoved: return (sent, done, true)
                }
            }
            return (sent, done, false)
        }
        for _ in 0..<8 {
            var done: [OutboxEntry] = []
            var writes: [(change: Outgoing, revision: Int64)] = []
            for change in unit {
                let current = try client.range(change.key).kvs.first
                if change.isSuperseded(by: current, state: state, signers: signers, verified: verified) {
                    done.append(change.entry)
                } else {
                    writes.append((change, current?.modRevision ?? 0))
                }
            }
            guard !writes.isEmpty else { return (0, done, false) }
            let written = try client.putAll(writes.map { ($0.change.key, $0.change.sealed, $0.revision) }, guards: Self.epochGuards(state))
            if written.succeeded {
                revisions.noteOwn(writes.map(\.change.key), revision: written.revision)
                return (writes.count, done + writes.map(\.change.entry), false)
            }
            if try Self.epochMoved(state, client: client) { return (0, [], true) }
        }
        return (0, [], false)
    }

    /// `changes` without the units (``SyncUnit``) that need a class key the vault does not
    /// hold now (a live row of a whenUnlocked item, while locked): those stay on etcd, and the
    /// cursor stays before the first of them (`revisions.heldFrom`) until a pull after the
    /// unlock applies them. The rest (deletes, items of open classes) applies now.
    func holdLocked(_ changes: [SyncChange], at modRevisions: [Int64], _ revisions: inout SyncRevisions) -> [SyncChange] {
        var ready: [SyncChange] = []
        var held = 0
        let indexed = Array(zip(changes, modRevisions))
        for unit in SyncUnit.grouped(indexed, key: { SyncUnit.key(of: $0.0.attributes) }) {
            let needs = unit.contains { change, _ in !change.deleted && !vault.isAvailable(change.attributes.accessibility ?? .whenUnlocked) }
            guard needs else {
                ready += unit.map(\.0)
                continue
            }
            held += unit.count
            if let first = unit.map(\.1).min() { revisions.heldFrom = min(revisions.heldFrom ?? first, first) }
        }
        revisions.heldCount = held
        return ready
    }

    /// What waits for the vault to be unlocked: received changes held back (applied at the
    /// first round after the unlock), and outbox rows of items whose secret a locked class
    /// keeps (sent whole after it).
    package var waitingForUnlock: (received: Int, outbox: Int) {
        revisions.withLock { ($0.heldCount, $0.waitingCount) }
    }

    /// What pulls applied to items (``SyncUnit``) since the last call: taken, so each is told once.
    package func takeArrivals() -> [SyncArrival] {
        revisions.withLock { (revisions: inout sending SyncRevisions) -> [SyncArrival] in
            let taken = revisions.arrived
            revisions.arrived = []
            revisions.collectsArrivals = true
            return taken
        }
    }
}
