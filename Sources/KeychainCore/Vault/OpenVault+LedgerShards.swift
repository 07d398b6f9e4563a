/// Checking the rows against the ledger, shard by shard (mutex held, inside the transaction
/// that reads them): a point read checks the one shard its identity digest falls in, a listing
/// or a write every shard, in one pass over the table. What was checked stays checked until
/// another connection commits (``checkLedger(_:)`` then loads the ledger afresh).
extension OpenVault {
    /// Checks the shard holding `identity` (a read that looks up that identity digest), or
    /// every shard (`nil`: a read by scope or class, which may meet any row). A format-2 vault
    /// has one shard: every row.
    ///
    /// - Throws: ``StoreError/tampered(_:)`` when the shard's rows are not the set its tally
    ///   vouches for, or its record is missing or fails authentication.
    func verifyLedgerShard(holding identity: [UInt8]?) throws(StoreError) {
        guard let unverified = ledger?.unverified else {
            if header.version >= 2 { throw lostTrackOfLedger }
            return
        }
        guard unverified > 0 else { return }
        guard let identity, ledger!.root != nil else { return try verifyEveryShard() }
        let shard = LedgerShards.shard(of: identity)
        if ledger!.isVerified(shard) { return }
        let found = try tallyItemShard(shard, key: try ledgerKey())
        guard found == (try storedTally(shard)) else { throw rowsDisagree }
        ledger!.markVerified(shard)
    }

    /// Checks every shard not checked yet, in one pass over the item table and the journal.
    func verifyEveryShard() throws(StoreError) {
        guard header.version >= 2 else { return }
        guard var state = ledger else { throw lostTrackOfLedger }
        guard state.unverified > 0 else { return }
        let found = try tallyEveryShard(of: state, key: try ledgerKey())
        try loadEveryTally(&state)
        var agree = true
        for shard in 0..<state.shardCount where !state.isVerified(shard) {
            if found[shard] == state.tally(shard) { state.markVerified(shard) } else { agree = false }
        }
        // The shards that agree stay checked: a read of one of them need not scan it again.
        ledger = state
        guard agree else { throw rowsDisagree }
    }

    private var rowsDisagree: StoreError {
        .tampered(
            "\(location.path): the items are not the set the ledger vouches for (a row deleted, restored from an older copy or renumbered); keychain verify shows what opens, keychain recover saves it"
        )
    }

    /// What the rows add up to now, shard by shard, under `key`: every item row in the shard
    /// its identity falls in, every journal row in the journal's.
    func tallyEveryShard(of state: LedgerState, key: HMACKey) throws(StoreError) -> [LedgerTally] {
        var found = [LedgerTally](repeating: .empty, count: state.shardCount)
        let vaultID = header.vaultID
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.selectLedgerRows).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    let row = Self.ledgerRow(s)
                    found[state.shard(ofItem: row.identity)].insert(ItemLedger.element(row, key: key, vaultID: vaultID))
                }
            }
            guard syncEnrolled else { return }
            try connection.statement(VaultSchema.readAllJournal).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    let element = ItemLedger.journalElement(identity: s.blob(0), pending: s.integer(1) != 0, record: s.blob(2), key: key, vaultID: vaultID)
                    found[state.journalShard].insert(element)
                }
            }
        }
        return found
    }

    /// What the rows in one item shard's range of the identity index add up to now.
    private func tallyItemShard(_ shard: Int, key: HMACKey) throws(StoreError) -> LedgerTally {
        var found = LedgerTally.empty
        let vaultID = header.vaultID
        let (text, bounds): (String, [Statement.Value]) =
            switch shard {
            case 0: (VaultSchema.selectFirstShardRows, [.blob(LedgerShards.lowerBound(1))])
            case LedgerShards.itemShards - 1: (VaultSchema.selectLastShardRows, [.blob(LedgerShards.lowerBound(shard))])
            default: (VaultSchema.selectShardRows, [.blob(LedgerShards.lowerBound(shard)), .blob(LedgerShards.lowerBound(shard + 1))])
            }
        try sql { () throws(SQLiteError) in
            try connection.statement(text).with(bounds) { (s: Statement) throws(SQLiteError) in
                while try s.step() { found.insert(ItemLedger.element(Self.ledgerRow(s), key: key, vaultID: vaultID)) }
            }
        }
        return found
    }

    private static func ledgerRow(_ s: Statement) -> ItemLedger.Row {
        ItemLedger.Row(id: s.integer(0), itemClass: UInt8(truncatingIfNeeded: s.integer(1)), identity: s.blob(2), generation: UInt64(bitPattern: s.integer(3)))
    }

    /// A format-3 shard's tally as its group's record holds it (loaded once); a group never
    /// written (generation 0) holds none but empty shards, and has no record to read.
    private func storedTally(_ shard: Int) throws(StoreError) -> LedgerTally {
        if let tally = ledger!.tally(shard) { return tally }
        let group = LedgerShards.group(of: shard)
        let stored = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readShardRecord).with([.text(LedgerShards.recordName(ofGroup: group))]) {
                (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil
            }
        }
        ledger!.load(try groupTallies(group, stored: stored, generation: ledger!.root!.groupGenerations[group]), group: group)
        return ledger!.tally(shard)!
    }

    /// A group's tallies from its record (`stored`), which must verify at the generation the
    /// root names for it; a group at generation 0 was never written, and its shards are empty.
    private func groupTallies(_ group: Int, stored: [UInt8]?, generation: UInt64) throws(StoreError) -> [LedgerTally] {
        guard generation > 0 else { return [LedgerTally](repeating: .empty, count: LedgerShards.shards(ofGroup: group).count) }
        guard let stored, let tallies = LedgerShards.decodeRecord(stored, group: group, generation: generation, key: try ledgerKey(), vaultID: header.vaultID)
        else { throw try ledgerUnreadable() }
        return tallies
    }

    /// Loads every format-3 group record not loaded yet, in one pass over `meta`.
    private func loadEveryTally(_ state: inout LedgerState) throws(StoreError) {
        guard let root = state.root else { return }
        var records = [[UInt8]?](repeating: nil, count: LedgerShards.groupCount)
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.readShardRecords).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    if let group = LedgerShards.group(ofRecordName: s.blob(0)) { records[group] = s.blob(1) }
                }
            }
        }
        for group in 0..<LedgerShards.groupCount where state.tally(LedgerShards.shards(ofGroup: group).lowerBound) == nil {
            state.load(try groupTallies(group, stored: records[group], generation: root.groupGenerations[group]), group: group)
        }
    }
}
