/// What sync asks of the vault (``JournaledVault``), each atomic: enrolling and leaving, reading the
/// outbox, acknowledging what etcd took, and applying what other devices wrote.
extension VaultState {
    /// Adds the sync journal, this device's id and the sync state; every synchronizable item
    /// already in the vault goes into the outbox.
    func enrollSync(device: [UInt8], state: SecretBytes) throws(StoreError) {
        try prepareWrite()
        try ledgerWrite { (transaction) throws(StoreError) in
            guard !syncEnrolled else { throw .duplicateItem }
            try sql { () throws(SQLiteError) in
                try connection.execute(VaultSchema.createSync)
                try connection.statement(VaultSchema.writeSyncDevice).run([.blob(device)])
            }
            database.noteSyncJournal(true)
            try storeSyncState(state)
            let existing = try matchingRows(Query(attributes: Attributes(synchronizable: true)), includeValue: false, needAttributes: true)
            for row in existing {
                guard let attributes = row.attributes else { continue }
                journal(row.itemClass, attributes, identity: row.identity, deleted: false, in: &transaction)
            }
        }
    }

    /// Removes the sync journal and state: the vault's items stay, and travel no more.
    func leaveSync() throws(StoreError) {
        try ledgerWrite { (_) throws(StoreError) in
            guard syncEnrolled else { return }
            try sql { () throws(SQLiteError) in try connection.execute(VaultSchema.dropSync) }
            database.noteSyncJournal(false)
            try recountLedger()
        }
    }

    /// The sync state, read (nil when not enrolled).
    func readSyncState() throws(StoreError) -> SecretBytes? {
        try checkedRead { () throws(StoreError) in try syncState() }
    }

    /// Replaces the sync state.
    func writeSyncState(_ state: SecretBytes) throws(StoreError) {
        try ledgerWrite { (_) throws(StoreError) in
            guard syncEnrolled else { throw .itemNotFound }
            try storeSyncState(state)
        }
    }

    /// Pending changes, with the values of the live ones: whole units (``SyncUnit``), each
    /// with every pending row of its item, taken until there are `limit` or more (a unit is
    /// never cut). A unit with a row whose class key is not available now (a locked vault
    /// cannot open a whenUnlocked secret) stays pending whole and is left out: no row of that
    /// version of the item leaves without the others. `waiting` counts the rows so held.
    func outbox(limit: Int) throws(StoreError) -> (entries: [OutboxEntry], pending: Int, waiting: Int) {
        try checkedRead { () throws(StoreError) in
            guard syncEnrolled else { return ([], 0, 0) }
            let pending = try pendingCount()
            guard limit > 0, pending > 0 else { return ([], pending, 0) }
            let rows = try sql { () throws(SQLiteError) -> [(identity: [UInt8], record: [UInt8])] in
                try connection.statement(VaultSchema.readAllPendingJournal).with([]) { (s: Statement) throws(SQLiteError) in
                    var rows: [(identity: [UInt8], record: [UInt8])] = []
                    while try s.step() { rows.append((s.blob(0), s.blob(1))) }
                    return rows
                }
            }
            var opened: [OutboxEntry] = []
            for (identity, record) in rows { opened.append(OutboxEntry(change: try openJournalRecord(record, identity: identity), record: record)) }
            var entries: [OutboxEntry] = []
            var waiting = 0
            units: for unit in SyncUnit.grouped(opened, key: { SyncUnit.key(of: $0.change.attributes) }) {
                guard entries.count < limit else { break }
                var whole: [OutboxEntry] = []
                for var entry in unit {
                    if !entry.change.deleted {
                        // A row gone since (deleted in a write whose journal entry replaced
                        // this one is not pending here): nothing of it to send.
                        guard let row = try row(identity: entry.change.identity, includeValue: true), let sealed = row.value else { continue }
                        do throws(StoreError) {
                            entry.change.attributes = try decryptAttributes(row).leaving(by: .sync)
                            entry.change.value = try open(sealed, row: row, part: .value)
                        } catch {
                            guard error.isUnavailableKey else { throw error }
                            waiting += unit.count
                            continue units
                        }
                    }
                    whole.append(entry)
                }
                entries += whole
            }
            return (entries, pending, waiting)
        }
    }

    /// What waits in the outbox by item (``SyncUnit``: a served item's rows are one, any
    /// other row is one of its own): how many items have pending changes, and how many of
    /// those items, and of their changes, wait for a class key the vault does not hold now
    /// (the outbox leaves such an item out whole until the unlock). A read: it opens what
    /// ``outbox(limit:)`` would, and writes nothing.
    func outboxItems() throws(StoreError) -> (items: Int, locked: Int, lockedChanges: Int) {
        try checkedRead { () throws(StoreError) in
            guard syncEnrolled, try pendingCount() > 0 else { return (0, 0, 0) }
            let rows = try sql { () throws(SQLiteError) -> [(identity: [UInt8], record: [UInt8])] in
                try connection.statement(VaultSchema.readAllPendingJournal).with([]) { (s: Statement) throws(SQLiteError) in
                    var rows: [(identity: [UInt8], record: [UInt8])] = []
                    while try s.step() { rows.append((s.blob(0), s.blob(1))) }
                    return rows
                }
            }
            var changes: [SyncChange] = []
            for (identity, record) in rows { changes.append(try openJournalRecord(record, identity: identity)) }
            let units = SyncUnit.grouped(changes) { SyncUnit.key(of: $0.attributes) }
            var locked = 0
            var lockedChanges = 0
            for unit in units {
                for change in unit where !change.deleted {
                    guard let row = try row(identity: change.identity, includeValue: true), let sealed = row.value else { continue }
                    do throws(StoreError) {
                        _ = try decryptAttributes(row)
                        _ = try open(sealed, row: row, part: .value)
                    } catch {
                        guard error.isUnavailableKey else { throw error }
                        locked += 1
                        lockedChanges += unit.count
                        break
                    }
                }
            }
            return (units.count, locked, lockedChanges)
        }
    }

    private func pendingCount() throws(StoreError) -> Int {
        try sql { () throws(SQLiteError) -> Int in
            try connection.statement(VaultSchema.countPendingJournal).with([]) { (s: Statement) throws(SQLiteError) -> Int in
                try s.step() ? Int(s.integer(0)) : 0
            }
        }
    }

    /// Marks outbox entries as taken by etcd, each only if no newer write replaced it since.
    func acknowledge(_ entries: [OutboxEntry]) throws(StoreError) {
        guard !entries.isEmpty else { return }
        try ledgerWrite { (_) throws(StoreError) in
            guard syncEnrolled else { return }
            let cleared = try sql { () throws(SQLiteError) -> [OutboxEntry] in
                let statement = try connection.statement(VaultSchema.clearPending)
                var cleared: [OutboxEntry] = []
                for entry in entries where try statement.runCountingChanges([.blob(entry.change.identity), .blob(entry.record)]) == 1 {
                    cleared.append(entry)
                }
                return cleared
            }
            for entry in cleared {
                try ledgerJournal(entry.change.identity, pending: true, record: entry.record, inserted: false)
                try ledgerJournal(entry.change.identity, pending: false, record: entry.record, inserted: true)
            }
        }
    }

    /// How many items the journal holds (pending or sent).
    func journalCount() throws(StoreError) -> Int {
        try checkedRead { () throws(StoreError) in
            try sql { () throws(SQLiteError) in
                try connection.statement(VaultSchema.countJournal).with([]) { (s: Statement) throws(SQLiteError) in try s.step() ? Int(s.integer(0)) : 0 }
            }
        }
    }

    /// Puts the sent journal entries whose items `isMissing` says etcd lacks back in the outbox.
    func resend(where isMissing: (SyncChange) -> Bool) throws(StoreError) -> Int {
        try ledgerWrite { (_) throws(StoreError) -> Int in
            guard syncEnrolled else { return 0 }
            var count = 0
            for entry in try journalEntries() where !entry.pending && isMissing(entry.change) {
                try storeJournalEntry(entry.change, pending: true)
                count += 1
            }
            return count
        }
    }

    /// Puts every journal entry back in the outbox (the cluster lost what it had).
    func resendAll() throws(StoreError) {
        try ledgerWrite { (_) throws(StoreError) in
            guard syncEnrolled else { return }
            try sql { () throws(SQLiteError) in try connection.execute(VaultSchema.markAllPending) }
            try recountLedger()
        }
    }

    /// Applies changes received from other devices, newest wins, and stores `state` (the
    /// advanced cursor) in the same transaction. The rows of one item (``SyncUnit``) are one
    /// version: the newer of the received one and the one this vault holds wins whole, and when
    /// the received one wins, every row of the item it lacks goes (an index row of an older
    /// attribute, a secret row of the item it deletes), a delete sent on for the others.
    func applyReceived(_ changes: [SyncChange], state: SecretBytes?) throws(StoreError) -> ApplyResult {
        try prepareWrite()
        return try ledgerWrite(fromSync: true) { (transaction) throws(StoreError) -> ApplyResult in
            guard syncEnrolled else { throw .itemNotFound }
            var result = ApplyResult()
            var appliedNow = Set<[UInt8]>()
            var received: [(change: SyncChange, attributes: Attributes)] = []
            for var change in changes {
                var attributes = change.attributes.normalizedIdentity(for: change.itemClass)
                attributes.accessibility = attributes.accessibility ?? .whenUnlocked
                guard attributes.mayLeave(by: .sync), change.origin.count == 16, change.deleted || change.value != nil else {
                    result.refused += 1
                    continue
                }
                change.identity = try identityDigest(change.itemClass, attributes)
                received.append((change, attributes))
            }
            var held: [String: [SyncChange]]?
            for unit in SyncUnit.grouped(received, key: { SyncUnit.key(of: $0.attributes) }) {
                guard let key = SyncUnit.key(of: unit[0].attributes) else {
                    try applyRow(unit[0].change, unit[0].attributes, &result, &appliedNow, in: &transaction)
                    continue
                }
                if held == nil { held = try journalByUnit() }
                let mine = held?[key] ?? []
                guard let incoming = SyncUnit.newest(unit.map(\.change)) else { continue }
                if let newest = SyncUnit.newest(mine), !incoming.isNewer(thanClock: newest.clock, origin: newest.origin) {
                    result.superseded += unit.count
                    // etcd served an older version than this vault holds: it lost the newer
                    // one (dropped, rolled back), so this vault sends its own again, whole.
                    if newest.isNewer(thanClock: incoming.clock, origin: incoming.origin), !mine.contains(where: { appliedNow.contains($0.identity) }) {
                        for entry in mine { try storeJournalEntry(entry, pending: true) }
                    }
                    continue
                }
                for row in unit { try applyRow(row.change, row.attributes, &result, &appliedNow, force: true, in: &transaction) }
                let existed = mine.contains { !$0.deleted }, exists = unit.contains { !$0.change.deleted }
                if existed || exists { result.arrived.append(SyncArrival(item: key, kind: !existed ? .created : exists ? .changed : .deleted)) }
                let kept = Set(unit.map(\.change.identity))
                for var entry in mine where !kept.contains(entry.identity) && !entry.deleted {
                    if let existing = try row(identity: entry.identity, includeValue: false) { try delete([existing], in: &transaction) }
                    entry.deleted = true
                    entry.clock = incoming.clock
                    entry.origin = incoming.origin
                    try storeJournalEntry(entry, pending: true)
                }
            }
            if let state { try storeSyncState(state) }
            return result
        }
    }

    /// Applies one received row: unless `force` (its unit's version won), only when newer
    /// than the journal's entry for it.
    private func applyRow(
        _ change: SyncChange, _ attributes: Attributes, _ result: inout ApplyResult, _ appliedNow: inout Set<[UInt8]>, force: Bool = false,
        in transaction: inout WriteTransaction
    ) throws(StoreError) {
        var change = change
        if !force, let local = try journalEntry(change.identity), !change.isNewer(thanClock: local.clock, origin: local.origin) {
            result.superseded += 1
            // etcd served an older change than this vault holds: it lost the newer
            // one (dropped, rolled back), so this vault sends its own again.
            if local.isNewer(thanClock: change.clock, origin: change.origin), !appliedNow.contains(change.identity) {
                try storeJournalEntry(local, pending: true)
            }
            return
        }
        let existing = try row(identity: change.identity, includeValue: false)
        if change.deleted {
            if let existing { try delete([existing], in: &transaction) }
        } else if var existing {
            existing.attributes = try decryptAttributes(existing)
            try replace(existing, attributes: attributes, value: change.value, in: &transaction)
        } else {
            try checkSize(of: change.value)
            try insert(Item(change.itemClass, attributes: attributes, value: change.value), in: &transaction)
        }
        change.attributes = SyncChange.address(of: change.itemClass, attributes)
        change.value = nil
        try storeJournalEntry(change, pending: false)
        appliedNow.insert(change.identity)
        result.applied += 1
    }

    /// The journal's entries of units (``SyncUnit``), by unit.
    private func journalByUnit() throws(StoreError) -> [String: [SyncChange]] {
        var units: [String: [SyncChange]] = [:]
        for entry in try journalEntries() {
            guard let key = SyncUnit.key(of: entry.change.attributes) else { continue }
            units[key, default: []].append(entry.change)
        }
        return units
    }
}
