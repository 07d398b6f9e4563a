/// The vault's side of sync: the journal of synchronizable items (clock, origin, pending) that
/// every write updates in its own transaction, the outbox it makes, and the applying of
/// changes received from other devices. Sync reaches it only through ``JournaledVault``.
///
/// Journal records and the sync state are sealed (AES-256-GCM) under a key derived from the
/// lookup key, bound to the vault and, for records, to the item's identity digest.
extension VaultState {
    // MARK: - During a write (mutex held, transaction open)

    /// Notes that `transaction` changed a synchronizable item (in a vault enrolled in sync).
    func journal(_ itemClass: ItemClass, _ attributes: Attributes, identity: [UInt8], deleted: Bool, in transaction: inout WriteTransaction) {
        guard syncEnrolled, !transaction.fromSync, attributes.mayLeave(by: .sync) else { return }
        transaction.note(
            SyncChange(identity: identity, clock: 0, origin: [], deleted: deleted, itemClass: itemClass, attributes: SyncChange.address(of: itemClass, attributes)))
    }

    /// Writes the changes `transaction` noted into the journal, pending: each gets a clock
    /// ahead of every one its item has had. True when there were any.
    func writeJournal(_ transaction: WriteTransaction) throws(StoreError) -> Bool {
        guard !transaction.changes.isEmpty else { return false }
        let device = try syncDevice()
        for var change in transaction.changes {
            let previous = try journalEntry(change.identity)
            change.clock = SyncChange.nextClock(after: previous?.clock ?? 0)
            change.origin = device
            try storeJournalEntry(change, pending: true)
        }
        return true
    }

    // MARK: - Journal rows

    func journalEntry(_ identity: [UInt8]) throws(StoreError) -> SyncChange? {
        let sealed = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readJournal).with([.blob(identity)]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in
                try s.step() ? s.blob(1) : nil
            }
        }
        guard let sealed else { return nil }
        return try openJournalRecord(sealed, identity: identity)
    }

    func storeJournalEntry(_ change: SyncChange, pending: Bool) throws(StoreError) {
        let key = try journalKey()
        let aad = journalAssociatedData(change.identity)
        let sealed = try Self.crypto { () throws(OpenSSLError) in try key.seal(change.encoded(withValue: false), associatedData: aad) }
        let replaced = try sql { () throws(SQLiteError) -> (pending: Bool, record: [UInt8])? in
            let old = try connection.statement(VaultSchema.readJournal).with([.blob(change.identity)]) { (s: Statement) throws(SQLiteError) in
                try s.step() ? (s.integer(0) != 0, s.blob(1)) : nil
            }
            try connection.statement(VaultSchema.writeJournal).run([.blob(change.identity), .integer(pending ? 1 : 0), .blob(sealed)])
            return old
        }
        if let replaced { try ledgerJournal(change.identity, pending: replaced.pending, record: replaced.record, inserted: false) }
        try ledgerJournal(change.identity, pending: pending, record: sealed, inserted: true)
    }

    /// Every journal entry, opened, with whether it is pending.
    func journalEntries() throws(StoreError) -> [(change: SyncChange, pending: Bool)] {
        guard syncEnrolled else { return [] }
        let rows = try sql { () throws(SQLiteError) -> [(identity: [UInt8], pending: Bool, record: [UInt8])] in
            try connection.statement(VaultSchema.readAllJournal).with([]) { (s: Statement) throws(SQLiteError) in
                var rows: [(identity: [UInt8], pending: Bool, record: [UInt8])] = []
                while try s.step() { rows.append((s.blob(0), s.integer(1) != 0, s.blob(2))) }
                return rows
            }
        }
        var entries: [(change: SyncChange, pending: Bool)] = []
        for row in rows { entries.append((try openJournalRecord(row.record, identity: row.identity), row.pending)) }
        return entries
    }

    /// Writes the journal again under the current keys (after a key rotation): each entry
    /// keyed by its item's new identity digest, sealed under the new journal key.
    func rewriteJournal(_ entries: [(change: SyncChange, pending: Bool)], state: SecretBytes) throws(StoreError) {
        try sql { () throws(SQLiteError) in try connection.execute("DELETE FROM sync_journal") }
        for entry in entries {
            var change = entry.change
            change.identity = try identityDigest(change.itemClass, change.attributes)
            try storeJournalEntry(change, pending: entry.pending)
        }
        try storeSyncState(state)
    }

    func openJournalRecord(_ sealed: [UInt8], identity: [UInt8]) throws(StoreError) -> SyncChange {
        let key = try journalKey()
        guard let opened = try? key.open(sealed, associatedData: journalAssociatedData(identity)), var change = SyncChange.decode(opened) else {
            throw .tampered("a sync journal record failed authentication (altered or moved between items)")
        }
        change.identity = identity
        return change
    }

    private func journalAssociatedData(_ identity: [UInt8]) -> [UInt8] {
        Array("swift-keychain sync journal v1".utf8) + header.vaultID + identity
    }

    func journalKey() throws(StoreError) -> SealingKey {
        if let key = lockState.keys.journal { return key }
        let lookup = try lookupKey()
        let key = SealingKey(try Self.crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: lookup.key, info: "swift-keychain sync journal v1") })
        lockState.hold(journalKey: key)
        return key
    }

    /// This device's id in its sync group, as enrollment stored it.
    func syncDevice() throws(StoreError) -> [UInt8] {
        let device = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readSyncDevice).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }
        guard let device, device.count == 16 else { throw .tampered("the vault is enrolled in sync but has no device id") }
        return device
    }

    // MARK: - Sync state

    /// The sealed sync state (the group's keys, the endpoints, the cursor), opened; nil when
    /// the vault is not enrolled.
    func syncState() throws(StoreError) -> SecretBytes? {
        guard syncEnrolled else { return nil }
        let sealed = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readSyncState).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }
        guard let sealed else { throw .tampered("the vault has a sync journal but no sync state") }
        guard let state = try? journalKey().open(sealed, associatedData: syncStateAssociatedData()) else {
            throw .tampered("the vault's sync state failed authentication")
        }
        return state
    }

    func storeSyncState(_ state: SecretBytes) throws(StoreError) {
        let key = try journalKey()
        let aad = syncStateAssociatedData()
        let sealed = try Self.crypto { () throws(OpenSSLError) in try key.seal(state, associatedData: aad) }
        try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writeSyncState).run([.blob(sealed)]) }
    }

    private func syncStateAssociatedData() -> [UInt8] { Array("swift-keychain sync state v1".utf8) + header.vaultID }
}
