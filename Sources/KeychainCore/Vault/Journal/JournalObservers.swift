/// Who this process has asked to be told when one of its writes journals a change for sync
/// (``Vault/observeJournal(_:)``): a sync engine running here sends the change at once.
/// Held in the vault's session, under its lock; the observers are called after it is let go.
struct JournalObservers {
    private var observers: [Int: @Sendable () -> Void] = [:]
    private var nextID = 0

    /// Whether nobody is told.
    var isEmpty: Bool { observers.isEmpty }

    /// Every observer, to be called once the session's lock is let go.
    var all: [@Sendable () -> Void] { Array(observers.values) }

    /// Adds `observer`; the id ends it (``remove(_:)``).
    mutating func add(_ observer: @escaping @Sendable () -> Void) -> Int {
        defer { nextID += 1 }
        observers[nextID] = observer
        return nextID
    }

    mutating func remove(_ id: Int) { observers[id] = nil }
}
