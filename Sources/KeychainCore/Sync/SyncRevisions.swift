/// What one engine remembers of etcd between rounds: the revision each item key was last
/// read or written at, and the revisions of its own writes. Owned by the engine's round lock
/// (``SyncEngine``), so one round at a time reads and changes it.
struct SyncRevisions {
    /// The revision etcd last gave each item key this engine read or wrote: a push to a key
    /// it knows goes straight to its compare-and-swap.
    private var known: [[UInt8]: Int64] = [:]
    /// The revisions of this engine's own pushes, whose watch events need no applying.
    private var own: Set<Int64> = []
    /// The first revision of a change held back because its item's class key is not available
    /// (a locked vault): the cursor stays before it until a pull applies it (``SyncUnit``).
    var heldFrom: Int64?
    /// How many received changes the last apply held back, and how many outbox rows the last
    /// push left for a class key.
    var heldCount = 0
    var waitingCount = 0
    /// What pulls applied to items (``SyncUnit``) since a daemon last took it (bounded), kept
    /// once one asked (an agent without clients to tell keeps none).
    var arrived: [SyncArrival] = []
    var collectsArrivals = false

    /// The revision etcd last gave `key`, when this engine has seen it.
    func revision(of key: [UInt8]) -> Int64? { known[key] }

    /// Whether `revision` is one of this engine's own writes.
    func isOwn(_ revision: Int64) -> Bool { own.contains(revision) }

    /// Notes the revision etcd gave a key (bounded: forgotten whole when large).
    mutating func remember(_ key: [UInt8], revision: Int64) {
        if known.count >= 100_000 { known.removeAll(keepingCapacity: true) }
        known[key] = revision
    }

    /// Notes this engine's own write at `revision` to `keys`.
    mutating func noteOwn(_ keys: [[UInt8]], revision: Int64) {
        for key in keys { remember(key, revision: revision) }
        if own.count >= 10_000 { own.removeAll(keepingCapacity: true) }
        own.insert(revision)
    }
}
