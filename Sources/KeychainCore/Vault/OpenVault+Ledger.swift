import FoundationEssentials

/// Keeping and checking the item ledger (``ItemLedger``): every read and write of a format-2
/// vault first checks that the item table is the set of rows the ledger vouches for, and every
/// write updates the ledger in the same transaction.
extension OpenVault {
    /// The ledger's key, derived from the lookup key: a process that may read items has it.
    func ledgerKey() throws(StoreError) -> HMACKey {
        if let key = keys.ledger { return key }
        let key = try Self.ledgerKey(lookup: try lookupKey())
        keys.ledger = key
        return key
    }

    static func ledgerKey(lookup: HMACKey) throws(StoreError) -> HMACKey {
        HMACKey(try crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: lookup.key, info: "swift-keychain ledger v2") })
    }

    /// Checks, inside a transaction (mutex held), that the vault is the one this process may
    /// serve: its schema and header as at open, and for format 2 its rows exactly those the
    /// ledger vouches for, at a generation no older than this boot has seen. Costs one
    /// `data_version` query while no other connection has committed; a full check otherwise.
    ///
    /// - Throws: ``StoreError/tampered(_:)`` for a vault that fails it, ``StoreError/locked``
    ///   when no key is available to check it with.
    func checkLedger() throws(StoreError) {
        let version = try sql { () throws(SQLiteError) in try connection.dataVersion() }
        if version == ledgerDataVersion, ledger != nil || header.version < 2 { return }
        ledger = nil
        if ledgerDataVersion != -1 {
            // Another connection committed: what open checked is checked again.
            let schema = try VaultSchema.check(connection, path: location.path)
            syncEnrolled = schema.synced
            try refreshHeader()
            try Self.checkFormat(schema: schema.format, header: header, path: location.path)
        }
        if header.version < 2 {
            guard try storedLedger() == nil else { throw .tampered("\(location.path) is a format-1 vault with an item ledger; refusing to use it") }
            if let key = try? ledgerKey(), let seen = seenGeneration(key: key) {
                throw .tampered("\(location.path) is a format-1 copy of a vault this boot has seen at format 2, generation \(seen): rolled back to an older copy")
            }
            ledgerDataVersion = version
            return
        }
        let key = try ledgerKey()
        guard let stored = try storedLedger(), let state = ItemLedger.decode(stored, key: key, vaultID: header.vaultID) else {
            // Keys rotated by another process are not damage: this process is locked.
            if try dropKeysIfRotated() { throw .locked }
            throw .tampered("\(location.path): the item ledger is missing or fails authentication")
        }
        let found = try scanLedger(key: key, generation: state.generation)
        guard found.count == state.count, Digest.equal(found.digest, state.digest) else {
            throw .tampered(
                "\(location.path): the items are not the set the ledger vouches for (a row deleted, restored from an older copy or renumbered); keychain verify shows what opens, keychain recover saves it"
            )
        }
        if let seen = seenGeneration(key: key), seen > state.generation {
            throw .tampered("\(location.path) is at generation \(state.generation), older than the \(seen) this boot has seen: the file was rolled back to an older copy")
        }
        ledger = state
        ledgerDataVersion = version
    }

    /// What the vault's rows add up to now, under `key`.
    func scanLedger(key: HMACKey, generation: UInt64) throws(StoreError) -> ItemLedger {
        var found = ItemLedger.empty
        found.generation = generation
        let vaultID = header.vaultID
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.selectLedgerRows).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    let row = ItemLedger.Row(
                        id: s.integer(0), itemClass: UInt8(truncatingIfNeeded: s.integer(1)), identity: s.blob(2),
                        generation: UInt64(bitPattern: s.integer(3)))
                    found.insert(ItemLedger.element(row, key: key, vaultID: vaultID))
                }
            }
            guard syncEnrolled else { return }
            try connection.statement(VaultSchema.readAllJournal).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    found.insert(ItemLedger.journalElement(identity: s.blob(0), pending: s.integer(1) != 0, record: s.blob(2), key: key, vaultID: vaultID))
                }
            }
        }
        return found
    }

    func storedLedger() throws(StoreError) -> [UInt8]? {
        try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readLedger).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }
    }

    /// This boot's newest generation of this vault, when the kernel keyring holds a genuine record.
    func seenGeneration(key: HMACKey) -> UInt64? {
        guard configuration.usesKernelKeyring else { return nil }
        return GenerationTable.generation(in: kernelKeyring.load(GenerationTable.description), key: key, vaultID: header.vaultID)
    }

    /// Runs `body` in a read transaction after ``checkLedger()``.
    func checkedRead<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try Self.transaction { () throws(TransactionError<StoreError>) in
            try connection.readTransaction { () throws(StoreError) -> R in
                try checkLedger()
                return try body()
            }
        }
    }

    /// Runs a write to a format-2 vault: one IMMEDIATE transaction that checks the ledger,
    /// gives every row `body` seals the next generation, and stores the updated ledger; after
    /// the commit, the generation is remembered for this boot. If anything fails, nothing is
    /// written and the ledger is checked afresh next time.
    func ledgerWrite<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        guard header.version >= 2 else { throw .unsupportedFormatVersion(Int(header.version)) }
        let result: R
        do {
            result = try writeTransaction { () throws(StoreError) -> R in
                try checkLedger()
                writeGeneration = ledger!.generation + 1
                journalChanges.removeAll()
                journaledLastWrite = false
                let result = try body()
                try writeJournal()
                try storeLedger()
                return result
            }
        } catch {
            forgetLedgerState()
            throw error
        }
        writeGeneration = 0
        rememberGeneration()
        if journaledLastWrite { syncWake?() }
        return result
    }

    /// Forgets the ledger as last verified (and any write in progress): the next read or write
    /// checks the file afresh.
    func forgetLedgerState() {
        journalChanges.removeAll()
        ledger = nil
        ledgerDataVersion = -1
        writeGeneration = 0
    }

    /// The ledger, at the write's generation, into the transaction in progress.
    func storeLedger() throws(StoreError) {
        guard var state = ledger else { throw .tampered("a write lost track of the item ledger") }
        state.generation = writeGeneration
        ledger = state
        let encoded = state.encoded(key: try ledgerKey(), vaultID: header.vaultID)
        try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writeLedger).run([.blob(encoded)]) }
    }

    /// Replaces the in-memory ledger by what the rows add up to (a rekey or an upgrade rewrote them all).
    func recountLedger() throws(StoreError) {
        ledger = try scanLedger(key: try ledgerKey(), generation: writeGeneration)
    }

    func ledgerInsert(id: Int64, itemClass: ItemClass, identity: [UInt8]) throws(StoreError) {
        let row = ItemLedger.Row(id: id, itemClass: itemClass.code, identity: identity, generation: writeGeneration)
        ledger?.insert(ItemLedger.element(row, key: try ledgerKey(), vaultID: header.vaultID))
    }

    func ledgerRemove(_ row: Row) throws(StoreError) {
        let entry = ItemLedger.Row(id: row.id, itemClass: row.itemClass.code, identity: row.identity, generation: row.generation)
        ledger?.remove(ItemLedger.element(entry, key: try ledgerKey(), vaultID: header.vaultID))
    }

    /// Records the committed generation in the kernel keyring, unless a newer one is there; an
    /// update lost to another process's (both read the table, both replaced it) is made again.
    func rememberGeneration() {
        guard configuration.usesKernelKeyring, let state = ledger, let key = try? ledgerKey() else { return }
        let vaultID = header.vaultID
        for _ in 0..<4 {
            var recorded = false
            Self.updateGenerationTable(kernelKeyring) { table in
                if let seen = GenerationTable.generation(in: table, key: key, vaultID: vaultID), seen >= state.generation {
                    recorded = true
                    return nil
                }
                return GenerationTable.recording(state.generation, in: table, key: key, vaultID: vaultID)
            }
            if recorded { return }
        }
    }

    /// Drops this boot's record of the vault's generations (a restore puts an older copy back on purpose).
    func forgetGeneration() {
        guard configuration.usesKernelKeyring else { return }
        Self.forgetGeneration(of: header.vaultID, in: kernelKeyring)
    }

    static func forgetGeneration(of vaultID: [UInt8], in kernelKeyring: KernelKeyring) {
        updateGenerationTable(kernelKeyring) { table in table.map { GenerationTable.forgetting(vaultID, in: $0) } }
    }

    /// Reads the generation table, lets `change` make the new one (nil: leave it), and replaces
    /// it, under one lock for the whole process, so that the vaults a process writes at once
    /// never drop each other's entries. Another process's update can still race this one; each
    /// writer then finds its own entry missing and makes it again.
    static func updateGenerationTable(_ kernelKeyring: KernelKeyring, _ change: (SecretBytes?) -> SecretBytes?) {
        generationTableLock.withLock {
            guard let updated = change(kernelKeyring.load(GenerationTable.description)) else { return }
            // The kernel refuses an empty payload: the last entry goes with the key.
            if updated.count == 0 { kernelKeyring.remove(GenerationTable.description) } else { try? kernelKeyring.store(updated, as: GenerationTable.description) }
        }
    }
}

private let generationTableLock = Lock()
