import FoundationEssentials

/// Key rotation: a new master key, new class keys and a new lookup key, every item re-sealed
/// (its digests recomputed, its value re-sealed, a presence item's inner seal too), the sync
/// journal and state re-sealed, all in one transaction. Afterwards an old key file, or an old
/// header opened with an old passphrase, opens nothing current: they unwrap only the retired
/// master key.
extension OpenVault {
    /// Rotates every key of a passphrase vault; the passphrase stays the same.
    /// - Throws: ``StoreError/wrongPassphrase`` (nothing changes), ``StoreError/invalidArgument(_:)``
    ///   for a vault without a passphrase, ``StoreError/boundToAnotherMachine`` (or
    ///   ``StoreError/unavailable(_:)``) when an item this machine cannot open would be lost.
    func rekey(passphrase: SecretBytes) throws(StoreError) {
        try withState { () throws(StoreError) in
            try refreshHeader()
            guard header.hasPassphrase else {
                throw .invalidArgument("a vault without a passphrase gets new keys when it gets a passphrase (keychain passwd)")
            }
            let (master, passphraseKey) = try openMasterKey(passphrase: passphrase)
            try adopt(master: master)
            if let passphraseKey { try upgrade(wrappingKey: passphraseKey) }
            try loadExistingClassKeys()
            try rotateKeys(passphrase: passphrase, currentPassphraseKey: passphraseKey)
        }
    }

    /// The rotation itself (mutex held, master key and class keys loaded). `passphrase` is the
    /// vault's (it stays), `currentPassphraseKey` its current scrypt output (for the presence key).
    func rotateKeys(passphrase: SecretBytes, currentPassphraseKey: SecretBytes?) throws(StoreError) {
        // Everything in clear first, with the old keys: the presence private key, then each item.
        var presencePair: (record: PresenceKeyRecord, privateKey: SecretBytes)?
        if let record = try storedPresenceKey(), let currentPassphraseKey {
            let vaultID = header.vaultID
            let opened = try Self.crypto { () throws(OpenSSLError) in try record.privateKey(passphraseKey: currentPassphraseKey, vaultID: vaultID) }
            guard let privateKey = opened else { throw .tampered("the presence private key does not open with the vault's passphrase") }
            presencePair = (record, privateKey)
        }
        presenceKey = presencePair?.privateKey
        defer { presenceKey = nil }
        var plaintext: [(row: Row, attributes: Attributes, value: SecretBytes)] = []
        let statement = try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.selectAllItems(format: Int(header.version))) }
        for row in try fetch(statement, [], includeValue: true, limit: nil) {
            let attributes = try decryptAttributes(row)
            let value = try open(row.value ?? [], row: row, part: .value)
            plaintext.append((row, attributes, value))
        }
        // The sync journal and state are sealed under a key that follows the lookup key, and
        // the journal is keyed by identity digests: both are read now and written anew.
        let journal = try journalEntries()
        let syncState = try syncState()

        // New keys: a new master key wrapped under the same passphrase with a new salt.
        let oldKeys = keys, oldHeader = header
        let newMaster = SecretBytes.random(count: 32)
        let salt = Random.bytes(VaultHeader.saltSize)
        var replacement = VaultHeader(version: header.version, vaultID: header.vaultID, protection: .passphrase(configuration.scryptParameters, salt: salt))
        let newPassphraseKey = try Self.crypto { () throws(OpenSSLError) in
            try Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: configuration.scryptParameters)
        }
        replacement.wrappedMasterKey = try Self.crypto { () throws(OpenSSLError) in
            try AESGCM.seal(newMaster, key: newPassphraseKey, associatedData: RecordCoding.masterKeyAssociatedData(replacement))
        }
        do throws(StoreError) {
            try ledgerWrite { () throws(StoreError) in
                try sql { () throws(SQLiteError) in
                    try connection.statement(VaultSchema.writeHeader).run([.blob(replacement.encoded())])
                    try connection.execute("DELETE FROM class_keys; DELETE FROM meta WHERE name IN ('machine', 'keycheck')")
                }
                header = replacement
                keys = KeyRing()
                identityMemo.removeAll()
                try adopt(master: newMaster)
                if let (record, privateKey) = presencePair {
                    // The same key pair, wrapped for the new salt, vouched for by the new master key.
                    let rewrapped = try Self.crypto { () throws(OpenSSLError) in
                        try PresenceKeyRecord(
                            privateKey: privateKey, publicKey: record.publicKey, passphraseKey: newPassphraseKey,
                            master: newMaster, vaultID: replacement.vaultID)
                    }
                    try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(rewrapped.encoded())]) }
                }
                for (row, attributes, value) in plaintext {
                    var sealedAttributes = attributes
                    sealedAttributes.accessibility = row.accessibility
                    sealedAttributes.accessControl = row.accessControl
                    let sealed = try seal(row.itemClass, attributes: sealedAttributes, value: value)
                    try overwrite(
                        row, protection: RecordCoding.protectionCode(row.accessibility, row.accessControl), with: sealed,
                        missing: "a rekey did not rewrite the row it read")
                }
                if let syncState { try rewriteJournal(journal, state: syncState) }
                // Every row changed, and so did the ledger's key (it follows the lookup key).
                try recountLedger()
            }
        } catch {
            keys = oldKeys
            header = oldHeader
            identityMemo.removeAll()
            throw error
        }
        // Caches of the retired keys go; the new ones are published (with their key checks).
        if configuration.usesKernelKeyring {
            kernelKeyring.remove(cacheDescription)
            kernelKeyring.remove(unlockedDescription)
        }
        try loadExistingClassKeys()
        publishToKernelKeyring()
    }

    /// True (and this process's keys dropped) when the keys it holds are not the vault's any
    /// more: another process rotated them. Checked before each write and when a seal does not
    /// open, by the lookup key's check value, so nothing is ever sealed under retired keys.
    func dropKeysIfRotated() throws(StoreError) -> Bool {
        guard let lookup = keys.lookup else { return false }
        let bytes = try storedKeyChecks()
        guard let bytes, let stored = KeyCheck.decode(bytes)?[KeyCheck.lookupCode] else { return false }
        guard !Digest.equal(stored, lookupCheck(lookup)) else { return false }
        lockKeys()
        keys.wipeAll()
        identityMemo.removeAll()
        heldThroughUserUnlock = false
        try refreshHeader()
        return true
    }
}
