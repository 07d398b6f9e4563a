/// The item ledger as one connection knows it (``OpenVault``'s mutex held): the generation it
/// verified, each shard's tally as stored (loaded when first needed), which shards' rows were
/// found to add up to their tally since the file last changed, and which shards the write in
/// progress changed. A format-2 vault is one shard, whose tally its ``ItemLedger`` holds; a
/// format-3 vault has ``LedgerShards/count`` under a ``LedgerRoot``.
struct LedgerState {
    var generation: UInt64
    /// Format 3's root as verified (each shard's generation); nil for format 2.
    var root: LedgerRoot?
    private(set) var tallies: [LedgerTally?]
    private(set) var verified: [Bool]
    /// How many shards are not verified yet: 0 once every row of the vault was checked.
    private(set) var unverified: Int
    private(set) var changed: [Bool]

    init(_ ledger: ItemLedger) {
        generation = ledger.generation
        root = nil
        tallies = [ledger.tally]
        verified = [false]
        unverified = 1
        changed = [false]
    }

    init(_ root: LedgerRoot) {
        generation = root.generation
        self.root = root
        tallies = [LedgerTally?](repeating: nil, count: LedgerShards.count)
        verified = [Bool](repeating: false, count: LedgerShards.count)
        unverified = LedgerShards.count
        changed = verified
    }

    var shardCount: Int { tallies.count }

    /// The shard an item row with `identity` counts in.
    func shard(ofItem identity: [UInt8]) -> Int { root == nil ? 0 : LedgerShards.shard(of: identity) }

    /// The shard the sync journal's rows count in.
    var journalShard: Int { root == nil ? 0 : LedgerShards.journalShard }

    func tally(_ shard: Int) -> LedgerTally? { tallies[shard] }

    func isVerified(_ shard: Int) -> Bool { verified[shard] }

    mutating func load(_ tally: LedgerTally, shard: Int) {
        tallies[shard] = tally
    }

    /// Records that the shard's rows add up to its (loaded) tally.
    mutating func markVerified(_ shard: Int) {
        guard !verified[shard] else { return }
        verified[shard] = true
        unverified -= 1
    }

    /// XORs a row's element into its shard's tally (a write, every shard verified); false when
    /// the shard's tally is not loaded.
    mutating func insert(_ element: [UInt8], shard: Int) -> Bool {
        guard tallies[shard] != nil else { return false }
        tallies[shard]!.insert(element)
        changed[shard] = true
        return true
    }

    /// XORs a row's element out of its shard's tally; false when the tally is not loaded.
    mutating func remove(_ element: [UInt8], shard: Int) -> Bool {
        guard tallies[shard] != nil else { return false }
        tallies[shard]!.remove(element)
        changed[shard] = true
        return true
    }

    /// Takes what the rows add up to as every shard's tally (a rekey or an upgrade rewrote the
    /// rows): the shards that hold rows are changed; the empty ones go back to generation 0,
    /// which needs no record.
    mutating func recount(_ found: [LedgerTally]) {
        for shard in 0..<shardCount {
            tallies[shard] = found[shard]
            verified[shard] = true
            changed[shard] = found[shard] != .empty || root == nil
            if found[shard] == .empty { root?.shardGenerations[shard] = 0 }
        }
        unverified = 0
    }

    /// The shards the write in progress changed, now stored at `generation`.
    mutating func stored(at generation: UInt64) {
        self.generation = generation
        root?.generation = generation
        for shard in 0..<shardCount where changed[shard] {
            root?.shardGenerations[shard] = generation
            changed[shard] = false
        }
    }
}
