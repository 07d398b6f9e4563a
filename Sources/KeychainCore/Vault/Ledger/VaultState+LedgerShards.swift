/// Checking the rows against the ledger, shard by shard (mutex held, inside the transaction
/// that reads them): a point read checks the one shard its identity digest falls in, a write of
/// named items the shards it changes (and the sync journal's), a listing or any other write
/// every shard, in one pass over the table. What was checked stays checked until
/// another connection commits (``checkLedger(_:)`` then loads the ledger afresh).
extension VaultState {
    /// Checks the shard holding `identity` (a read that looks up that identity digest, or a
    /// write about to change a row there), or every shard (`nil`: a read by scope or class,
    /// which may meet any row). A format-2 vault has one shard: every row.
    ///
    /// - Throws: ``StoreError/tampered(_:)`` when the shard's rows are not the set its tally
    ///   vouches for, or its record is missing or fails authentication.
    func verifyLedgerShard(holding identity: [UInt8]?) throws(StoreError) {
        var uncounted: ScopeCount?
        try verifyLedgerShard(holding: identity, counting: &uncounted)
    }

    /// As ``verifyLedgerShard(holding:)``; when that is a pass over the whole table, `scope`'s
    /// rows are counted in it (else ``ScopeCount/rows`` stays nil).
    func verifyLedgerShard(holding identity: [UInt8]?, counting scope: inout ScopeCount?) throws(StoreError) {
        guard let unverified = ledger.state?.unverified else {
            if header.version >= 2 { throw lostTrackOfLedger }
            return
        }
        guard unverified > 0 else { return }
        guard let identity, ledger.state!.root != nil else { return try verifyEveryShard(counting: &scope) }
        let shard = LedgerShards.shard(of: identity)
        if ledger.state!.isVerified(shard) { return }
        try verify(shard, found: try tallyItemShard(shard, key: try ledgerKey()))
    }

    /// Checks the sync journal's shard alone: a write to an enrolled vault that names its items
    /// may journal them, and checks the item shards it meets as it goes.
    ///
    /// - Throws: ``StoreError/tampered(_:)`` when the journal's rows are not the set its tally
    ///   vouches for, or its group's record is missing or fails authentication.
    func verifyJournalShard() throws(StoreError) {
        guard let state = ledger.state else { throw lostTrackOfLedger }
        guard state.root != nil else { return try verifyEveryShard() }
        let shard = state.journalShard
        if state.isVerified(shard) { return }
        var found = LedgerTallies(count: 1)
        try countJournal(into: &found, at: 0, key: try ledgerKey())
        try verify(shard, found: found[0])
    }

    /// Checks a format-4 read by `scope` (a scope digest): the rows of the scope shard it falls
    /// in, read through the scope index, add up to that shard's tally, and `lookup`'s rows
    /// among them are counted as the table holds them (``ScopeCount``), for
    /// ``confirmScopeIndex(returned:values:byProtection:counted:)``. The elements bind each
    /// row's scope digest: a row deleted, put back from an older copy, renumbered, moved into
    /// or out of the scope, or left out of the index (or listed there under another digest)
    /// makes the tally disagree or the count differ from what the lookup returns.
    ///
    /// - Throws: ``StoreError/tampered(_:)`` when the shard's rows are not the set its tally
    ///   vouches for, or its group's record is missing or fails authentication.
    func verifyScopeShard(_ scope: [UInt8], counting lookup: inout ScopeCount?) throws(StoreError) {
        guard let state = ledger.state, state.isScoped else { throw lostTrackOfLedger }
        let shard = LedgerShards.scopeShard(of: scope), index = LedgerShards.shard(of: scope)
        let (slot, bounds): (StatementSlot, [Statement.Value]) =
            switch index {
            case 0: (VaultSchema.selectFirstScopeShardRows, [.blob(LedgerShards.lowerBound(1))])
            case LedgerShards.scopeShards - 1: (VaultSchema.selectLastScopeShardRows, [.blob(LedgerShards.lowerBound(index))])
            default: (VaultSchema.selectScopeShardRows, [.blob(LedgerShards.lowerBound(index)), .blob(LedgerShards.lowerBound(index + 1))])
            }
        var found = LedgerTallies(count: 1)
        var elements = LedgerRowElements(key: try ledgerKey(), vaultID: header.vaultID)
        var counting = lookup
        counting?.passed()
        try sql { () throws(SQLiteError) in
            try connection.statement(slot).with(bounds) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    elements.countScope(s, into: &found, at: 0)
                    counting?.count(s, scope: 4, itemClass: 1, protection: 5)
                }
            }
        }
        guard found[0] == (try storedTally(shard)) else {
            throw .tampered(
                "\(location.path): the rows under a scope are not the set the ledger vouches for (a row deleted, restored from an older copy, renumbered, moved between scopes, or left out of the scope index); keychain verify shows what opens, keychain recover saves it"
            )
        }
        lookup = counting
    }

    private func verify(_ shard: Int, found: LedgerTally) throws(StoreError) {
        guard found == (try storedTally(shard)) else { throw rowsDisagree }
        ledger.markVerified(shard)
    }

    /// Checks every shard not checked yet, in one pass over the item table and the journal.
    /// Format 3 compares each group's record with what its shards' rows add up to; when all
    /// agree, those tallies are the stored ones, and are kept for the writes that follow.
    func verifyEveryShard() throws(StoreError) {
        var uncounted: ScopeCount?
        try verifyEveryShard(counting: &uncounted)
    }

    /// As ``verifyEveryShard()``, counting `scope`'s rows in its pass over the table, if it makes one.
    func verifyEveryShard(counting scope: inout ScopeCount?) throws(StoreError) {
        guard header.version >= 2 else { return }
        guard let state = ledger.state else { throw lostTrackOfLedger }
        guard state.unverified > 0 else { return }
        var census: ScopeCensus? = ScopeCensus()
        let found = try tallyEveryShard(of: state, key: try ledgerKey(), counting: &scope, census: &census)
        let stored = state.isLoaded ? state.tallies : try storedGroupRecords(of: state)
        guard ledger.passed(found: found, stored: stored) else { throw rowsDisagree }
        if let census { ledger.keep(census, changes: connection.totalChanges()) }
    }

    /// Every format-3 shard's tally as its group's record holds it, read in one pass over
    /// `meta`. A group the root names a generation for must have a record that verifies at it;
    /// a group at generation 0 was never written, and its shards are empty.
    private func storedGroupRecords(of state: LedgerState) throws(StoreError) -> LedgerTallies {
        guard let root = state.root else { throw lostTrackOfLedger }
        let key = try ledgerKey(), vaultID = header.vaultID
        let groups = root.groupCount, total = state.shardCount
        var stored = LedgerTallies(count: total)
        var read = [UInt8](repeating: 0, count: groups)
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.readGroupRecords).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    guard let group = LedgerShards.group(ofRecordName: s.blob(0), groups: groups), root.generation(ofGroup: group) > 0, read[group] == 0,
                        let tallies = LedgerShards.decodeRecord(
                            s.blob(1), group: group, generation: root.generation(ofGroup: group), key: key, vaultID: vaultID, of: total)
                    else { continue }
                    read[group] = 1
                    stored.replace(from: LedgerShards.shards(ofGroup: group, of: total).lowerBound, with: tallies)
                }
            }
        }
        for group in 0..<groups where read[group] == 0 {
            guard root.generation(ofGroup: group) == 0 else { throw try ledgerUnreadable() }
        }
        return stored
    }

    private var rowsDisagree: StoreError {
        .tampered(
            "\(location.path): the items are not the set the ledger vouches for (a row deleted, restored from an older copy or renumbered); keychain verify shows what opens, keychain recover saves it"
        )
    }

    /// What the rows add up to now, shard by shard, under `key`: every item row in the shard
    /// its identity falls in, every journal row in the journal's.
    func tallyEveryShard(of state: LedgerState, key: HMACKey) throws(StoreError) -> LedgerTallies {
        var uncounted: ScopeCount?
        var noCensus: ScopeCensus?
        return try tallyEveryShard(of: state, key: key, counting: &uncounted, census: &noCensus)
    }

    /// As ``tallyEveryShard(of:key:)``, also counting `scope`'s rows, and every scope's rows
    /// into `census` (unless nil).
    func tallyEveryShard(of state: LedgerState, key: HMACKey, counting scope: inout ScopeCount?, census: inout ScopeCensus?) throws(StoreError) -> LedgerTallies {
        var found = LedgerTallies(count: state.shardCount)
        let vaultID = header.vaultID
        var counting = scope
        var counted = census
        var elements = LedgerRowElements(key: key, vaultID: vaultID)
        try sql { () throws(SQLiteError) in
            let text = counting == nil && counted == nil && !state.isScoped ? VaultSchema.selectLedgerRows : VaultSchema.selectLedgerRowsWithScope
            try connection.statement(text).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    elements.count(s, into: &found, state: state)
                    counting?.count(s, scope: 4, itemClass: 1, protection: 5)
                    counted?.count(s, scope: 4, itemClass: 1)
                }
            }
        }
        scope = counting
        census = counted
        if syncEnrolled { try countJournal(into: &found, at: state.journalShard, key: key) }
        return found
    }

    /// Counts every sync journal row into tally `index` of `tallies`.
    private func countJournal(into tallies: inout LedgerTallies, at index: Int, key: HMACKey) throws(StoreError) {
        let vaultID = header.vaultID
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.readAllJournal).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    let element = ItemLedger.journalElement(identity: s.blob(0), pending: s.integer(1) != 0, record: s.blob(2), key: key, vaultID: vaultID)
                    tallies.count(element, at: index, inserted: true)
                }
            }
        }
    }

    /// What the rows in one item shard's range of the identity index add up to now.
    private func tallyItemShard(_ shard: Int, key: HMACKey) throws(StoreError) -> LedgerTally {
        var found = LedgerTallies(count: 1)
        let vaultID = header.vaultID
        let (slot, bounds): (StatementSlot, [Statement.Value]) =
            switch shard {
            case 0: (VaultSchema.selectFirstShardRows, [.blob(LedgerShards.lowerBound(1))])
            case LedgerShards.itemShards - 1: (VaultSchema.selectLastShardRows, [.blob(LedgerShards.lowerBound(shard))])
            default: (VaultSchema.selectShardRows, [.blob(LedgerShards.lowerBound(shard)), .blob(LedgerShards.lowerBound(shard + 1))])
            }
        var elements = LedgerRowElements(key: key, vaultID: vaultID)
        try sql { () throws(SQLiteError) in
            try connection.statement(slot).with(bounds) { (s: Statement) throws(SQLiteError) in
                while try s.step() { elements.count(s, into: &found) }
            }
        }
        return found[0]
    }

    /// A format-3 shard's tally as its group's record holds it: from the tallies a full check
    /// or a write into its group loaded, or else read from the record for this one check and
    /// not kept.
    private func storedTally(_ shard: Int) throws(StoreError) -> LedgerTally {
        if ledger.state!.holdsTally(of: shard) { return ledger.state!.tallies[shard] }
        let group = LedgerShards.group(of: shard)
        return try storedGroupTallies(group)[shard - ledger.state!.shards(ofGroup: group).lowerBound]
    }

    /// Before a write changes a format-3 shard's tally: its group's tallies as stored, which
    /// the write rewrites whole.
    func loadGroupTallies(holding shard: Int) throws(StoreError) {
        guard let state = ledger.state, !state.holdsTally(of: shard) else { return }
        let group = LedgerShards.group(of: shard)
        ledger.load(try storedGroupTallies(group), ofGroup: group)
    }

    private func storedGroupTallies(_ group: Int) throws(StoreError) -> LedgerTallies {
        try groupTallies(group, stored: try metaValue(named: LedgerShards.recordName(ofGroup: group)), generation: ledger.state!.root!.generation(ofGroup: group))
    }

    /// A group's tallies from its record (`stored`), which must verify at the generation the
    /// root names for it; a group at generation 0 was never written, and its shards are empty.
    private func groupTallies(_ group: Int, stored: [UInt8]?, generation: UInt64) throws(StoreError) -> LedgerTallies {
        let total = ledger.state!.shardCount
        guard generation > 0 else { return LedgerTallies(count: LedgerShards.shards(ofGroup: group, of: total).count) }
        guard let stored,
            let tallies = LedgerShards.decodeRecord(stored, group: group, generation: generation, key: try ledgerKey(), vaultID: header.vaultID, of: total)
        else { throw try ledgerUnreadable() }
        return tallies
    }
}
