import FoundationEssentials

/// Rows an upgrade from format 1 carried over as format 1 sealed them (generation 0): those
/// that did not open where the vault was upgraded (another machine's ThisDeviceOnly items,
/// presence items whose proof was not at hand, damaged rows). The ledger vouches for a row's
/// id, class, identity and generation, and from format 2 on the generation is sealed into the
/// row, so an older copy of a row fails; a generation-0 row has no generation in its seal,
/// and an older copy of its ciphertext would pass. Such a row is never served as current: it
/// is re-sealed, at a new generation, by the first unlock where it opens, and refused until then.
extension VaultState {
    /// Whether `row` is one of those (in a vault of format 2 or later).
    func isCarriedOver(_ row: ItemRow) -> Bool { row.generation == 0 && header.version >= 2 }

    /// What serving a carried-over row would need: it cannot be told from an older copy.
    var carriedRowRefused: StoreError {
        .tampered(
            "the item was carried over from vault format 1 without being re-sealed (it did not open where the vault was upgraded), so an older copy of it could not be told from it; unlock the vault on the machine where it opens to re-seal it, or copy it out with keychain recover"
        )
    }

    /// Re-seals, at a new generation and in one transaction, every carried-over row that opens
    /// here now (mutex held, the master key in hand); `passphraseKey` opens the presence
    /// private key for presence items. Rows that still do not open stay as they are.
    func resealCarriedRows(passphraseKey: SecretBytes?) throws(StoreError) {
        guard header.version >= 2, try metaValue(named: VaultSchema.noCarriedRowsName) == nil else { return }
        guard try !items.carriedRows().isEmpty else { return }
        var context = ReadContext(presenceKey: try passphraseKey.flatMap { (key) throws(StoreError) in try presencePrivateKey(passphraseKey: key) })
        try ledgerWrite { (transaction) throws(StoreError) in
            for row in try items.carriedRows() {
                let attributes: Attributes
                let value: SecretBytes
                do throws(StoreError) {
                    attributes = try decryptAttributes(row)
                    value = try open(row.value ?? [], row: row, part: .value, context: &context)
                } catch {
                    guard error.isUnavailableKey || error.isDamage || error == .interactionNotAllowed else { throw error }
                    continue
                }
                let sealed = try seal(row.itemClass, attributes: attributes, value: value, generation: transaction.generation)
                try overwrite(
                    row, protection: row.protection, with: sealed,
                    missing: "a re-seal did not rewrite the row it read", generation: transaction.generation)
            }
            if header.version >= 4 { try noteIfNoCarriedRows() }
        }
    }

    /// Inside a write transaction: records (``VaultSchema/noCarriedRowsName``) that the table
    /// holds no carried-over row, if it holds none.
    func noteIfNoCarriedRows() throws(StoreError) {
        guard try !items.holdsCarriedRows() else { return }
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.writeMeta).run([.text(VaultSchema.noCarriedRowsName), .blob([1])])
        }
    }

    /// The presence private key, opened with the passphrase's scrypt output; nil when the vault
    /// has no presence key or it does not open with that key.
    func presencePrivateKey(passphraseKey: SecretBytes) throws(StoreError) -> SecretBytes? {
        guard let record = try storedPresenceKey() else { return nil }
        let vaultID = header.vaultID
        return (try? Self.crypto { () throws(OpenSSLError) in try record.privateKey(passphraseKey: passphraseKey, vaultID: vaultID) }) ?? nil
    }
}
