import FoundationEssentials

/// Keeping and checking the item ledger (``ItemLedger``, ``LedgerShards``): every read and
/// write of a vault from format 2 on first checks that the rows it meets are the set the ledger
/// vouches for, and every write updates the ledger in the same transaction.
extension VaultState {
    /// The ledger's key, derived from the lookup key: a process that may read items has it.
    func ledgerKey() throws(StoreError) -> HMACKey {
        if let key = lockState.keys.ledger { return key }
        let key = try Self.ledgerKey(lookup: try lookupKey())
        lockState.hold(ledgerKey: key)
        return key
    }

    static func ledgerKey(lookup: HMACKey) throws(StoreError) -> HMACKey {
        HMACKey(try crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: lookup.key, info: "swift-keychain ledger v2") })
    }

    /// How much of the item table must be vouched for before a read runs: all of it, or only
    /// the shards the read looks into (``verifyLedgerShard(holding:)``, as it looks).
    enum LedgerCheck { case everyRow, rowsAsRead }

    /// Checks, inside a transaction (mutex held), that the vault is the one this process may
    /// serve: its schema and header as at open, and from format 2 on its ledger authentic, at a
    /// generation no older than this boot has seen, and (`.everyRow`) its rows exactly those
    /// the ledger vouches for. Costs one `data_version` query while no other connection has
    /// committed and the rows asked for were checked before.
    ///
    /// - Throws: ``StoreError/tampered(_:)`` for a vault that fails it, ``StoreError/locked``
    ///   when no key is available to check it with.
    func checkLedger(_ check: LedgerCheck = .everyRow) throws(StoreError) {
        let version = try sql { () throws(SQLiteError) in try connection.dataVersion() }
        if !ledger.holds(at: version, format: header.version) {
            try loadLedger(dataVersion: version)
        }
        if check == .everyRow { try verifyEveryShard() }
    }

    /// Reads and authenticates the stored ledger (format 2's, or format 3's root), forgetting
    /// what was verified before: another connection committed, or nothing was read yet.
    private func loadLedger(dataVersion version: Int64) throws(StoreError) {
        var rechecked = ledger.reload()
        // Another connection committed: what open checked is checked again.
        if rechecked { try recheckFormat() }
        while true {
            do throws(StoreError) {
                try adoptStoredLedger()
                break
            } catch {
                // The header read at open may predate another process's upgrade of the vault.
                guard !rechecked, error.isDamage else { throw error }
                rechecked = true
                let opened = header.version
                try recheckFormat()
                guard header.version != opened else { throw error }
            }
        }
        ledger.verified(at: version)
    }

    private func recheckFormat() throws(StoreError) {
        let schema = try VaultSchema.check(connection, path: location.path)
        database.noteSyncJournal(schema.synced)
        try database.refreshHeader()
        try Self.checkFormat(schema: schema.format, header: header, path: location.path)
    }

    private func adoptStoredLedger() throws(StoreError) {
        if header.version < 2 {
            guard try storedLedger() == nil else { throw .tampered("\(location.path) is a format-1 vault with an item ledger; refusing to use it") }
            if let key = try? ledgerKey(), let seen = seenGeneration(key: key) {
                throw .tampered("\(location.path) is a format-1 copy of a vault this boot has seen at format 2, generation \(seen): rolled back to an older copy")
            }
            return
        }
        let key = try ledgerKey()
        guard let stored = try storedLedger() else { throw try ledgerUnreadable() }
        if header.version >= 3 {
            let groups = LedgerShards.groupCount(format: header.version)
            guard let root = LedgerRoot.decode(stored, key: key, vaultID: header.vaultID, groups: groups) else { throw try ledgerUnreadable() }
            ledger.adopt(root, recordVanished: try recordVanished(at: root.generation, root: root, key: key))
        } else {
            guard let decoded = ItemLedger.decode(stored, key: key, vaultID: header.vaultID) else { throw try ledgerUnreadable() }
            ledger.adopt(decoded, recordVanished: try recordVanished(at: decoded.generation, root: nil, key: key))
        }
    }

    /// Whether the stored ledger at `generation` (format 3's `root`) was written in this boot
    /// yet this boot's record of it is gone, warning once when it is.
    ///
    /// - Throws: ``StoreError/tampered(_:)`` when this boot has seen a newer generation: the
    ///   file was rolled back.
    private func recordVanished(at generation: UInt64, root: LedgerRoot?, key: HMACKey) throws(StoreError) -> Bool {
        let seen = seenGeneration(key: key)
        if let seen, seen > generation {
            throw .tampered("\(location.path) is at generation \(generation), older than the \(seen) this boot has seen: the file was rolled back to an older copy")
        }
        let vanished = recordVanished(root, seen: seen)
        if vanished { FailureLog.warnOnce(readsUnvouched) }
        return vanished
    }

    /// Why a ledger record is missing or fails authentication: keys rotated by another process
    /// are not damage (this process is locked); anything else is tampering.
    func ledgerUnreadable() throws(StoreError) -> StoreError {
        if try dropKeysIfRotated() { return .locked }
        return .tampered("\(location.path): the item ledger is missing or fails authentication")
    }

    func storedLedger() throws(StoreError) -> [UInt8]? { try metaValue(named: VaultSchema.ledgerName) }

    /// The `meta` value of that name, if there is one.
    func metaValue(named name: String) throws(StoreError) -> [UInt8]? {
        try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readMeta).with([.text(name)]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }
    }

    /// Runs `body` in a read transaction after ``checkLedger(_:)``. With `.rowsAsRead`, `body`
    /// must read rows only through ``forEachMatchingRow(_:includeValue:needAttributes:fields:unavailable:_:)``,
    /// which checks each shard it looks into.
    func checkedRead<R>(_ check: LedgerCheck = .everyRow, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try Self.transaction { () throws(TransactionError<StoreError>) in
            try connection.readTransaction { () throws(StoreError) -> R in
                try checkLedger(check)
                return try body()
            }
        }
    }

    /// Runs a write to a vault of format 2 or later: one IMMEDIATE transaction that checks the ledger,
    /// gives every row `body` seals the next generation, and stores the updated ledger; after
    /// the commit, the generation is remembered for this boot. If anything fails, nothing is
    /// written and the ledger is checked afresh next time.
    ///
    /// With `.rowsAsRead`, for a write that meets only items it names by identity, a format-3
    /// vault's rows are checked shard by shard as `body` looks them up or writes them
    /// (``row(identity:includeValue:)``, ``verifyLedgerShard(holding:)``): a write beside a
    /// tampered shard goes ahead and leaves that shard as it found it. In a vault enrolled in
    /// sync, the journal's shard is checked first, as any such write may journal its items.
    func ledgerWrite<R>(
        _ check: LedgerCheck = .everyRow, fromSync: Bool = false, _ body: (inout WriteTransaction) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        try journaledWrite(check, fromSync: fromSync, body).result
    }

    /// A ``ledgerWrite(_:fromSync:_:)``, and whether it journaled a synchronizable change.
    func journaledWrite<R>(
        _ check: LedgerCheck = .everyRow, fromSync: Bool = false, _ body: (inout WriteTransaction) throws(StoreError) -> R
    ) throws(StoreError) -> (result: R, journaled: Bool) {
        guard header.version >= 2 else { throw .unsupportedFormatVersion(Int(header.version)) }
        let outcome: (result: R, journaled: Bool)
        let classesBefore = lockState.keys.classes.count
        // Whether the schema had a sync journal as the transaction found it, before `body` ran.
        var enrolledAtStart: Bool?
        do {
            outcome = try writeTransaction { () throws(StoreError) -> (result: R, journaled: Bool) in
                // The format and the sync enrolment are as the check found them (another process may have changed them).
                try checkLedger(.rowsAsRead)
                if check == .everyRow || header.version < 3 {
                    try verifyEveryShard()
                } else if syncEnrolled {
                    try verifyJournalShard()
                }
                if ledger.state!.recordVanished, !recordReturned(key: try ledgerKey(), waiting: true) { throw generationRecordMissing }
                enrolledAtStart = syncEnrolled
                var transaction = WriteTransaction(generation: ledger.nextGeneration!, fromSync: fromSync)
                let result = try body(&transaction)
                let journaled = try writeJournal(transaction)
                try storeLedger(generation: transaction.generation)
                return (result, journaled)
            }
        } catch {
            // A rolled-back enrolment or leave did not change the schema: a write run again
            // (after an unlock) must not look for a journal that is not there, or miss one that is.
            if let enrolledAtStart { database.noteSyncJournal(enrolledAtStart) }
            forgetLedgerState()
            throw error
        }
        rememberGeneration()
        // A class key the write created is published now that it is committed.
        if lockState.keys.classes.count != classesBefore { publishToKernelKeyring() }
        return outcome
    }

    /// Forgets the ledger as last verified: the next read or write checks the file afresh.
    func forgetLedgerState() {
        ledger.forget()
    }

    /// The ledger, at the write's `generation`, into the transaction in progress: in format 3,
    /// the record of each group holding a shard the write changed, then the root.
    func storeLedger(generation: UInt64) throws(StoreError) {
        // Every shard a write changed has its group's tallies loaded (``LedgerState/count(_:shard:inserted:)``).
        guard ledger.state != nil else { throw lostTrackOfLedger }
        let key = try ledgerKey(), vaultID = header.vaultID
        let boot = recordingBoot
        do {
            let state = ledger.state!
            let groups = state.changedGroups
            if !groups.isEmpty {
                try sql { () throws(SQLiteError) in
                    let write = try connection.statement(VaultSchema.writeMeta)
                    for group in groups {
                        let tallies = state.tallies.slice(state.shards(ofGroup: group))
                        let record = LedgerShards.encodedRecord(tallies, group: group, generation: generation, key: key, vaultID: vaultID)
                        try write.run([.text(LedgerShards.recordName(ofGroup: group)), .blob(record)])
                    }
                }
            }
        }
        // The held ledger moves on before the root is written: a write that fails from here
        // on is rolled back, and its caller forgets the ledger (``forgetLedgerState()``).
        ledger.stored(at: generation, boot: boot)
        let state = ledger.state!
        let encoded =
            state.root?.encoded(key: key, vaultID: vaultID) ?? ItemLedger(generation: generation, tally: state.tallies[0]).encoded(key: key, vaultID: vaultID)
        try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writeMeta).run([.text(VaultSchema.ledgerName), .blob(encoded)]) }
    }

    var lostTrackOfLedger: StoreError { .tampered("a write lost track of the item ledger") }

    /// Replaces the in-memory ledger by what the rows add up to (a rekey or an upgrade rewrote them all).
    func recountLedger() throws(StoreError) {
        guard let state = ledger.state else { throw lostTrackOfLedger }
        ledger.recount(try tallyEveryShard(of: state, key: try ledgerKey()))
    }

    func ledgerInsert(id: Int64, itemClass: ItemClass, identity: [UInt8], scope: [UInt8], generation: UInt64) throws(StoreError) {
        let row = ItemLedger.Row(id: id, itemClass: itemClass.code, identity: identity, generation: generation)
        try count(ItemLedger.element(row, key: try ledgerKey(), vaultID: header.vaultID), in: ledger.state?.shard(ofItem: identity), inserted: true)
        try countScope(row, scope: scope, inserted: true)
    }

    func ledgerRemove(_ row: ItemRow) throws(StoreError) {
        let entry = ItemLedger.Row(id: row.id, itemClass: row.itemClass.code, identity: row.identity, generation: row.generation)
        try count(ItemLedger.element(entry, key: try ledgerKey(), vaultID: header.vaultID), in: ledger.state?.shard(ofItem: row.identity), inserted: false)
        try countScope(entry, scope: row.scope, inserted: false)
    }

    /// A format-4 row's scope element, into (`inserted`) or out of its scope shard's tally.
    private func countScope(_ row: ItemLedger.Row, scope: [UInt8], inserted: Bool) throws(StoreError) {
        guard let state = ledger.state, state.isScoped else { return }
        let shard = LedgerShards.scopeShard(of: scope)
        try loadGroupTallies(holding: shard)
        let element = ItemLedger.scopeElement(row, scope: scope, key: try ledgerKey(), vaultID: header.vaultID)
        guard ledger.count(element, shard: shard, inserted: inserted, unchecked: true) else { throw lostTrackOfLedger }
    }

    /// The ledger's account of a journal row written (`inserted`) or removed in the write in progress.
    func ledgerJournal(_ identity: [UInt8], pending: Bool, record: [UInt8], inserted: Bool) throws(StoreError) {
        let element = ItemLedger.journalElement(identity: identity, pending: pending, record: record, key: try ledgerKey(), vaultID: header.vaultID)
        try count(element, in: ledger.state?.journalShard, inserted: inserted)
    }

    private func count(_ element: [UInt8], in shard: Int?, inserted: Bool) throws(StoreError) {
        guard let shard else { throw lostTrackOfLedger }
        try loadGroupTallies(holding: shard)
        guard ledger.count(element, shard: shard, inserted: inserted) else { throw lostTrackOfLedger }
    }
}
