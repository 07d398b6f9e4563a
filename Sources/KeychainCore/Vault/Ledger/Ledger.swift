/// The item ledger as this connection last verified it: the ledger's state, the file's
/// `data_version` it was verified at (while no other connection commits, what was verified
/// stays true without a new scan), and the lookups through the scope index confirmed at that
/// version (``VaultState/confirmScopeIndex(returned:values:byProtection:counted:)``).
struct Ledger {
    /// The ledger as last verified (from format 2 on); nil before it is read or once forgotten.
    private(set) var state: LedgerState?
    /// The `data_version` at which it was verified; -1 when it never was, or was forgotten.
    private(set) var dataVersion: Int64 = -1
    private var confirmedLookups: Set<[UInt8]> = []
    private var lookupsVersion: Int64 = -1
    /// The rows under each scope as the last pass over the whole table found them, the
    /// `data_version` that pass ran at and this connection's change count then: it stands for
    /// the table only while both are unchanged (no connection wrote since).
    private var census: (rows: ScopeCensus, version: Int64, changes: Int64)?

    /// Whether what was verified still stands at `version` for a vault of `format` (format 1
    /// has no ledger to hold).
    func holds(at version: Int64, format: UInt16) -> Bool {
        version == dataVersion && (state != nil || format < 2)
    }

    /// Whether the ledger was verified before: then a new `data_version` means another
    /// connection committed, and what open checked is checked again.
    var wasVerified: Bool { dataVersion != -1 }

    /// Lets go of the held ledger to read it again: another connection committed, or none was
    /// read yet. True when one was verified before; then what open checked is checked again.
    mutating func reload() -> Bool {
        state = nil
        return wasVerified
    }

    /// Takes format 2's stored ledger, as read and authenticated, as the held one;
    /// `recordVanished` when this boot wrote it yet its record of the generation is gone.
    mutating func adopt(_ stored: ItemLedger, recordVanished: Bool) {
        state = LedgerState(stored)
        state!.noteRecord(vanished: recordVanished)
    }

    /// Takes format 3's stored root, as read and authenticated, as the held ledger;
    /// `recordVanished` as for format 2's.
    mutating func adopt(_ root: LedgerRoot, recordVanished: Bool) {
        state = LedgerState(root)
        state!.noteRecord(vanished: recordVanished)
    }

    /// An upgrade rewrites every row under a new format's root: the held ledger starts over
    /// empty, with `groups` groups, until ``recount(_:)`` takes what the rewritten rows add up to.
    mutating func startOver(groups: Int) {
        state = LedgerState(LedgerRoot.empty(groups: groups))
    }

    /// The generation the next write stores: generations only grow, one a write. Nil while no
    /// ledger is held.
    var nextGeneration: UInt64? { state.map { $0.generation + 1 } }

    /// Loads one group's stored tallies into the held ledger, before a write changes one of them.
    mutating func load(_ groupTallies: LedgerTallies, ofGroup group: Int) { state?.load(groupTallies, ofGroup: group) }

    /// Counts `element` in or out of `shard` of the held ledger; false when none is held or the
    /// shard's tally is not loaded.
    mutating func count(_ element: [UInt8], shard: Int, inserted: Bool, unchecked: Bool = false) -> Bool {
        state?.count(element, shard: shard, inserted: inserted, unchecked: unchecked) == true
    }

    /// Records that this boot's record of the held ledger's generation is back.
    mutating func recordReturned() { state?.noteRecord(vanished: false) }

    /// Marks `shard` of the held ledger as checked against the rows.
    mutating func markVerified(_ shard: Int) { state?.markVerified(shard) }

    /// Takes what a pass over every row `found`, shard by shard, against what the ledger's
    /// records hold (`stored`): the shards that agree are verified, and stay so even when
    /// others do not (a read of one need not scan it again); when all agree, the found
    /// tallies are the stored ones, held for the writes that follow. Whether all agreed.
    mutating func passed(found: LedgerTallies, stored: LedgerTallies) -> Bool {
        guard state != nil else { return false }
        if found == stored {
            for shard in 0..<found.count { state!.markVerified(shard) }
            state!.load(found)
            return true
        }
        for shard in 0..<found.count where found.matches(shard, stored, shard) { state!.markVerified(shard) }
        return false
    }

    /// Takes what the rows add up to as every shard's tally: a rekey or an upgrade rewrote
    /// them all, in the write in progress.
    mutating func recount(_ found: LedgerTallies) { state?.recount(found) }

    /// The shards the write in progress changed are now stored at `generation`, by a write
    /// that ran in `boot`.
    mutating func stored(at generation: UInt64, boot: [UInt8]) { state?.stored(at: generation, boot: boot) }

    /// Records that the ledger (``state``, as now set) was verified at `version`.
    mutating func verified(at version: Int64) {
        dataVersion = version
    }

    /// Forgets what was verified: the next read or write checks the file afresh.
    mutating func forget() {
        state = nil
        dataVersion = -1
        census = nil
    }

    /// Keeps `rows`, taken by a pass over the whole table at the current `data_version` when
    /// this connection's change count was `changes`.
    mutating func keep(_ rows: ScopeCensus, changes: Int64) {
        census = (rows, dataVersion, changes)
    }

    /// The census of the last pass over the whole table, if nothing was written since: the
    /// `data_version` is the current one and this connection's change count is still `changes`.
    func census(changes: Int64) -> ScopeCensus? {
        guard let census, census.version == dataVersion, dataVersion != -1, census.changes == changes else { return nil }
        return census.rows
    }

    /// Whether the scope-index lookup `key` was confirmed at the current `data_version`.
    func confirmed(lookup key: [UInt8]) -> Bool {
        lookupsVersion == dataVersion && confirmedLookups.contains(key)
    }

    /// Records that the scope-index lookup `key` matched the table at the current `data_version`.
    mutating func confirm(lookup key: [UInt8]) {
        if lookupsVersion != dataVersion {
            confirmedLookups = []
            lookupsVersion = dataVersion
        }
        confirmedLookups.insert(key)
    }
}
