import FoundationEssentials

/// The upgrade of an older vault to format 3, in place and in one transaction, the header
/// re-wrapped as format 3 and the item ledger written sharded (``LedgerShards``). From format 1
/// every item that opens here is re-sealed (padded, bound to its generation), the rest are
/// carried over exactly as they were (still sealed the format-1 way, as generation 0:
/// ThisDeviceOnly items of another machine, items behind a proof of presence). From format 2
/// the rows stay as they are and only the ledger changes, at the next generation. Reads never
/// upgrade: an older vault is read as it is until its first write, or its unlock.
extension VaultState {
    /// Upgrades before a write (mutex held): a key-file vault with its key file. A passphrase
    /// vault is upgraded by its unlock, which has the passphrase the header is re-wrapped with:
    /// until then a format-2 one is written as format 2, and a locked format-1 one (which has
    /// no ledger to keep) asks for the unlock.
    func upgradeBeforeWrite() throws(StoreError) {
        guard header.version < VaultHeader.currentVersion else { return }
        try database.refreshHeader()
        guard header.version < VaultHeader.currentVersion else { return }
        guard !header.hasPassphrase else {
            if header.version >= 2 { return }
            throw .locked
        }
        try loadImplicitKeys()
        try upgrade(wrappingKey: try VaultFile.readKeyFile(location.keyFilePath))
    }

    /// The upgrade itself (mutex held, master key in hand); `wrappingKey` wraps the master key
    /// (the key file's key, or the passphrase's scrypt output). Does nothing to a format-3 vault.
    func upgrade(wrappingKey: SecretBytes) throws(StoreError) {
        // Formats only grow: a header read as current stays current.
        guard header.version < VaultHeader.currentVersion else { return }
        guard let master = lockState.keys.master else { throw .locked }
        var replacement = header
        replacement.version = VaultHeader.currentVersion
        replacement.wrappedMasterKey = try Self.crypto { () throws(OpenSSLError) in
            try AESGCM.seal(master, key: wrappingKey, associatedData: RecordCoding.masterKeyAssociatedData(replacement))
        }
        var upgraded = false
        do throws(StoreError) {
            try writeTransaction { () throws(StoreError) in
                // Another process may have upgraded it a moment ago.
                try Self.checkFormat(schema: try VaultSchema.check(connection, path: location.path).format, header: header, path: location.path)
                try database.refreshHeader()
                guard header.version < VaultHeader.currentVersion else { return }
                try checkLedger()
                let format = Int(header.version)
                let generation: UInt64
                if format < 2 {
                    let rows = try rowsToCarry()
                    generation = 1
                    let resealed = try rows.map { (row) throws(StoreError) in try resealedForUpgrade(row, generation: generation) }
                    try sql { () throws(SQLiteError) in
                        try connection.execute("DROP TABLE items")
                        try connection.execute(VaultSchema.createItems)
                        let insert = try connection.statement(VaultSchema.insertItemWithID)
                        for row in resealed { try insert.run(row) }
                    }
                } else {
                    // Generations only grow: this boot may have seen the format-2 one.
                    generation = ledger.nextGeneration!
                }
                database.replaceHeader(with: replacement)
                ledger.startOver(groups: LedgerShards.groupCount(format: replacement.version))
                try recountLedger()
                try storeLedger(generation: generation)
                try noteIfNoCarriedRows()
                try database.storeHeader(replacement)
                // The ledger just stored is current as of this transaction's snapshot, which
                // this connection's own commit does not move: read after the commit, the
                // version would also cover other processes' commits this ledger never saw.
                ledger.verified(at: try sql { () throws(SQLiteError) in try connection.dataVersion() })
                upgraded = true
            }
        } catch {
            if header == replacement { try? database.refreshHeader() }
            forgetLedgerState()
            throw error
        }
        if upgraded { rememberGeneration() }
    }

    /// Every row of the format-1 table.
    private func rowsToCarry() throws(StoreError) -> [ItemRow] {
        let rows = try items.allRows()
        // A row that does not even decode would be lost by the rebuild: refuse instead.
        guard try rows.count == items.count() else {
            throw .corrupted("\(location.path) has items with an unknown class or protection code; keychain recover saves the others")
        }
        return rows
    }

    /// The new table's values for one row: re-sealed at `generation` (the first) when it opens
    /// here, carried over as generation 0 otherwise.
    private func resealedForUpgrade(_ row: ItemRow, generation: UInt64) throws(StoreError) -> [Statement.Value] {
        let protection = row.protection
        func values(_ generation: UInt64, _ identity: [UInt8], _ scope: [UInt8], _ attributes: [UInt8], _ value: [UInt8]) -> [Statement.Value] {
            [
                .integer(row.id), .integer(Int64(row.itemClass.code)), .integer(Int64(protection)), .blob(identity), .blob(scope),
                .blob(attributes), .blob(value), .integer(Int64(generation)),
            ]
        }
        let carried = values(0, row.identity, row.scope, row.sealedAttributes, row.value ?? [])
        guard row.accessControl == nil else { return carried }
        let attributes: Attributes
        let value: SecretBytes
        do {
            attributes = try decryptAttributes(row)
            value = try open(row.value ?? [], row: row, part: .value)
        } catch {
            guard error.isUnavailableKey || error.isDamage else { throw error }
            return carried
        }
        let sealed = try seal(row.itemClass, attributes: attributes, value: value, generation: generation)
        // The digests come from the same lookup key: a row keeps its identity and scope.
        return values(1, sealed.identity, sealed.scope, sealed.attributes, sealed.value)
    }
}
