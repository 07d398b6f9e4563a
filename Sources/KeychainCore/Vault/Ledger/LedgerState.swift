/// The item ledger as one connection knows it (the vault's lock held): the generation it
/// verified, shards' tallies as stored (every shard's after a check of every shard, a group's
/// after a write into it: a point read compares its one shard with its group's record and keeps
/// nothing else), which shards' rows were found to add up to their tally since the file last
/// changed, and which shards the write in progress changed. A format-2 vault is one shard,
/// whose tally its ``ItemLedger`` holds; a format-3 vault has ``LedgerShards/count`` in groups
/// under a ``LedgerRoot``.
struct LedgerState {
    private(set) var generation: UInt64
    /// Format 3's root as verified; nil for format 2.
    private(set) var root: LedgerRoot?
    private(set) var tallies: LedgerTallies
    /// Per group, 1 once `tallies` holds its shards' tallies: format 2's one shard from the
    /// start; format 3's groups all at the first full check, or one by one as writes into them
    /// load the records they rewrite (a process that only reads by identity never makes the
    /// 41 KB array).
    private var loadedGroups: [UInt8]
    /// Per shard, 1 once its rows were found to add up to its tally (bytes, not `Bool`s: see
    /// ``LedgerTallies``).
    private var verified: [UInt8]
    /// How many shards are not verified yet: 0 once every row of the vault was checked.
    private(set) var unverified: Int
    private var isChanged: [UInt8]
    /// The shards the write in progress changed, in the order it changed them.
    private var changed: [Int] = []
    /// Whether the root was written in this boot yet this boot's record of its generation is
    /// gone (``VaultState/recordVanished(_:seen:)``): reads go on, writes wait for the owner.
    private(set) var recordVanished = false

    /// Records whether this boot's record of the ledger's generation is gone.
    mutating func noteRecord(vanished: Bool) { recordVanished = vanished }

    init(_ ledger: ItemLedger) {
        generation = ledger.generation
        root = nil
        tallies = LedgerTallies(count: 1)
        tallies[0] = ledger.tally
        loadedGroups = [1]
        verified = [0]
        unverified = 1
        isChanged = [0]
    }

    init(_ root: LedgerRoot) {
        generation = root.generation
        self.root = root
        tallies = LedgerTallies(count: 0)
        loadedGroups = [UInt8](repeating: 0, count: root.groupCount)
        verified = [UInt8](repeating: 0, count: LedgerShards.count(groups: root.groupCount))
        unverified = verified.count
        isChanged = verified
    }

    var shardCount: Int { verified.count }

    /// Whether item rows also count in scope shards (format 4, ``LedgerShards``).
    var isScoped: Bool { verified.count > LedgerShards.count }

    /// The shard an item row with `identity` counts in.
    func shard(ofItem identity: [UInt8]) -> Int { root == nil ? 0 : LedgerShards.shard(of: identity) }

    /// As ``shard(ofItem:)``, of an identity where SQLite keeps it.
    func shard(ofItem identity: UnsafeRawBufferPointer) -> Int { root == nil ? 0 : LedgerShards.shard(of: identity) }

    /// The shard the sync journal's rows count in.
    var journalShard: Int { root == nil ? 0 : LedgerShards.journalShard }

    func isVerified(_ shard: Int) -> Bool { verified[shard] != 0 }

    /// Takes every format-3 shard's tally as the group records hold them.
    mutating func load(_ every: LedgerTallies) {
        tallies = every
        loadedGroups = [UInt8](repeating: 1, count: loadedGroups.count)
    }

    /// Whether `tallies` holds every shard's.
    var isLoaded: Bool { !loadedGroups.contains(0) }

    /// Whether `tallies` holds the tally of `shard` (and of every shard in its group).
    func holdsTally(of shard: Int) -> Bool {
        loadedGroups[LedgerShards.group(of: shard)] != 0
    }

    /// The shards group `group` holds.
    func shards(ofGroup group: Int) -> Range<Int> { LedgerShards.shards(ofGroup: group, of: shardCount) }

    /// Takes a format-3 group's tallies as its record holds them.
    mutating func load(_ groupTallies: LedgerTallies, ofGroup group: Int) {
        if tallies.count == 0 { tallies = LedgerTallies(count: shardCount) }
        tallies.replace(from: shards(ofGroup: group).lowerBound, with: groupTallies)
        loadedGroups[group] = 1
    }

    /// Records that the shard's rows add up to its (loaded) tally.
    mutating func markVerified(_ shard: Int) {
        guard verified[shard] == 0 else { return }
        verified[shard] = 1
        unverified -= 1
    }

    /// XORs a row's element into (`inserted`) or out of its shard's tally, in a write that
    /// verified the shard before changing its rows; false when it did not, or the shard's tally
    /// is not loaded. A scope shard's tally (`unchecked`) is changed as stored, checked or not:
    /// a write never reads rows by scope, and rows that disagree with a tally still disagree
    /// once the same element is XORed into both.
    mutating func count(_ element: [UInt8], shard: Int, inserted: Bool, unchecked: Bool = false) -> Bool {
        guard unchecked || isVerified(shard), holdsTally(of: shard) else { return false }
        tallies.count(element, at: shard, inserted: inserted)
        markChanged(shard)
        return true
    }

    private mutating func markChanged(_ shard: Int) {
        guard isChanged[shard] == 0 else { return }
        isChanged[shard] = 1
        changed.append(shard)
    }

    /// Takes what the rows add up to as every shard's tally (a rekey or an upgrade rewrote the
    /// rows): the shards that hold rows are changed; groups of none but empty ones go back to
    /// generation 0, which needs no record.
    mutating func recount(_ found: LedgerTallies) {
        load(found)
        for shard in 0..<shardCount {
            verified[shard] = 1
            if !found.isEmpty(shard) || root == nil { markChanged(shard) }
        }
        unverified = 0
        root?.resetGroups()
    }

    /// The format-3 groups whose records the write in progress changes, each with its tallies.
    var changedGroups: [Int] {
        guard root != nil else { return [] }
        var groups: [Int] = []
        for shard in changed where !groups.contains(LedgerShards.group(of: shard)) { groups.append(LedgerShards.group(of: shard)) }
        return groups
    }

    /// The shards the write in progress changed, now stored at `generation` by a write that ran
    /// in `boot` (``BootIdentity/none`` when it keeps no record of generations).
    mutating func stored(at generation: UInt64, boot: [UInt8]) {
        self.generation = generation
        if root != nil {
            root!.generation = generation
            root!.writerBoot = boot
            for shard in changed { root!.setGeneration(generation, ofGroup: LedgerShards.group(of: shard)) }
        }
        for shard in changed { isChanged[shard] = 0 }
        changed.removeAll(keepingCapacity: true)
    }
}
