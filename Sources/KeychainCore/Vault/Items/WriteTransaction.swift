/// One write in progress (``VaultState/ledgerWrite(_:fromSync:_:)``), passed down to every row
/// it seals: the generation it gives them, the synchronizable items it changed (journaled
/// before it commits), and whether it applies changes received through sync (journaled as
/// received, not pending).
struct WriteTransaction {
    /// The generation the write gives the rows it seals: one past the ledger's.
    let generation: UInt64
    /// Whether the write applies changes from other devices.
    let fromSync: Bool
    /// The synchronizable items the write changed, one entry an item.
    private(set) var changes: [SyncChange] = []

    init(generation: UInt64, fromSync: Bool = false) {
        precondition(generation > 0, "generation 0 marks the rows a format-1 vault carried over")
        self.generation = generation
        self.fromSync = fromSync
    }

    /// Notes that the write changed `change.identity`'s item (its last change wins).
    mutating func note(_ change: SyncChange) {
        changes.removeAll { $0.identity == change.identity }
        changes.append(change)
    }
}
