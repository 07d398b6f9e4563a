/// The item ledger as one connection knows it (``OpenVault``'s mutex held): the generation it
/// verified, each shard's tally as stored (a format-3 group's loaded when first needed), which
/// shards' rows were found to add up to their tally since the file last changed, and which
/// shards the write in progress changed. A format-2 vault is one shard, whose tally its
/// ``ItemLedger`` holds; a format-3 vault has ``LedgerShards/count`` in groups under a
/// ``LedgerRoot``.
struct LedgerState {
    var generation: UInt64
    /// Format 3's root as verified; nil for format 2.
    private(set) var root: LedgerRoot?
    private var tallies: [LedgerTally?]
    private var verified: [Bool]
    /// How many shards are not verified yet: 0 once every row of the vault was checked.
    private(set) var unverified: Int
    private var isChanged: [Bool]
    /// The shards the write in progress changed, in the order it changed them.
    private(set) var changed: [Int] = []

    init(_ ledger: ItemLedger) {
        generation = ledger.generation
        root = nil
        tallies = [ledger.tally]
        verified = [false]
        unverified = 1
        isChanged = [false]
    }

    init(_ root: LedgerRoot) {
        generation = root.generation
        self.root = root
        tallies = [LedgerTally?](repeating: nil, count: LedgerShards.count)
        verified = [Bool](repeating: false, count: LedgerShards.count)
        unverified = LedgerShards.count
        isChanged = verified
    }

    var shardCount: Int { tallies.count }

    /// The shard an item row with `identity` counts in.
    func shard(ofItem identity: [UInt8]) -> Int { root == nil ? 0 : LedgerShards.shard(of: identity) }

    /// The shard the sync journal's rows count in.
    var journalShard: Int { root == nil ? 0 : LedgerShards.journalShard }

    func tally(_ shard: Int) -> LedgerTally? { tallies[shard] }

    func isVerified(_ shard: Int) -> Bool { verified[shard] }

    /// Takes a format-3 group's tallies as its record holds them.
    mutating func load(_ groupTallies: [LedgerTally], group: Int) {
        for (shard, tally) in zip(LedgerShards.shards(ofGroup: group), groupTallies) { tallies[shard] = tally }
    }

    /// Records that the shard's rows add up to its (loaded) tally.
    mutating func markVerified(_ shard: Int) {
        guard !verified[shard] else { return }
        verified[shard] = true
        unverified -= 1
    }

    /// XORs a row's element into (`inserted`) or out of its shard's tally, in a write that
    /// verified every shard; false when the shard's tally is not loaded.
    mutating func count(_ element: [UInt8], shard: Int, inserted: Bool) -> Bool {
        guard tallies[shard] != nil else { return false }
        if inserted { tallies[shard]!.insert(element) } else { tallies[shard]!.remove(element) }
        markChanged(shard)
        return true
    }

    private mutating func markChanged(_ shard: Int) {
        guard !isChanged[shard] else { return }
        isChanged[shard] = true
        changed.append(shard)
    }

    /// Takes what the rows add up to as every shard's tally (a rekey or an upgrade rewrote the
    /// rows): the shards that hold rows are changed; groups of none but empty ones go back to
    /// generation 0, which needs no record.
    mutating func recount(_ found: [LedgerTally]) {
        for shard in 0..<shardCount {
            tallies[shard] = found[shard]
            verified[shard] = true
            if found[shard] != .empty || root == nil { markChanged(shard) }
        }
        unverified = 0
        if root != nil { root!.groupGenerations = LedgerRoot.empty.groupGenerations }
    }

    /// The format-3 groups whose records the write in progress changes, each with its tallies.
    var changedGroups: [(group: Int, tallies: [LedgerTally])] {
        guard root != nil else { return [] }
        var groups: [Int] = []
        for shard in changed where !groups.contains(LedgerShards.group(of: shard)) { groups.append(LedgerShards.group(of: shard)) }
        return groups.map { group in (group, LedgerShards.shards(ofGroup: group).map { tallies[$0] ?? .empty }) }
    }

    /// Whether every shard of the groups the write changes is loaded (their records rewritten whole).
    var changedGroupsLoaded: Bool {
        changed.allSatisfy { LedgerShards.shards(ofGroup: LedgerShards.group(of: $0)).allSatisfy { tallies[$0] != nil } }
    }

    /// The shards the write in progress changed, now stored at `generation`.
    mutating func stored(at generation: UInt64) {
        self.generation = generation
        if root != nil {
            root!.generation = generation
            for shard in changed { root!.groupGenerations[LedgerShards.group(of: shard)] = generation }
        }
        for shard in changed { isChanged[shard] = false }
        changed.removeAll(keepingCapacity: true)
    }
}
