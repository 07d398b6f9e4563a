import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Key rotation: a new master key, new class keys and a new lookup key, every item re-sealed
/// (its digests recomputed, its value re-sealed, a presence item's inner seal too), the sync
/// journal and state re-sealed, all in one transaction. Afterwards an old key file, or an old
/// header opened with an old passphrase, opens nothing current: they unwrap only the retired
/// master key.
///
/// The expensive part (scrypt) runs before the transaction; every row is read, opened and
/// re-sealed inside it, so a write of another process lands either before the rotation (and
/// is re-sealed by it) or after it (under the new keys), never in between.
extension VaultState {
    /// Rotates every key of a passphrase vault; the passphrase stays the same.
    /// - Throws: ``StoreError/wrongPassphrase`` (nothing changes), ``StoreError/invalidArgument(_:)``
    ///   for a vault without a passphrase, ``StoreError/boundToAnotherMachine`` (or
    ///   ``StoreError/unavailable(_:)``) when an item this machine cannot open would be lost,
    ///   ``StoreError/io(_:)`` when another process changed the keys meanwhile (nothing changes).
    ///   `opened`: the current keys, when derived outside the vault's lock.
    func rekey(passphrase: SecretBytes, opened: OpenedMasterKey? = nil) throws(StoreError) {
        try database.refreshHeader()
        guard header.hasPassphrase else {
            throw .invalidArgument("a vault without a passphrase gets new keys when it gets a passphrase (keychain passwd)")
        }
        let (master, passphraseKey) = try openMasterKey(passphrase: passphrase, opened: opened)
        try adopt(master: master)
        if let passphraseKey { try upgrade(wrappingKey: passphraseKey) }
        try loadExistingClassKeys()
        let rotation = try KeyRotation(passphrase: passphrase, header: header, parameters: configuration.scryptParameters)
        try rotateKeys(rotation, currentPassphraseKey: passphraseKey)
    }

    /// The new keys of a rotation, made before its transaction starts: a new master key wrapped
    /// under the passphrase with a new salt (scrypt), in the header that will replace `header`.
    struct KeyRotation {
        /// The header the rotation was planned against: another process's rotation or
        /// passphrase change since then makes the plan stale.
        let replacing: VaultHeader
        let master: SecretBytes
        let header: VaultHeader
        let passphraseKey: SecretBytes

        init(passphrase: SecretBytes, header current: VaultHeader, parameters: ScryptParameters) throws(StoreError) {
            replacing = current
            master = SecretBytes.random(count: 32)
            let salt = Random.bytes(VaultHeader.saltSize)
            var replacement = VaultHeader(version: current.version, vaultID: current.vaultID, protection: .passphrase(parameters, salt: salt))
            passphraseKey = try VaultState.crypto { () throws(OpenSSLError) in
                try Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
            }
            let master = master, key = passphraseKey
            replacement.wrappedMasterKey = try VaultState.crypto { () throws(OpenSSLError) in
                try AESGCM.seal(master, key: key, associatedData: RecordCoding.masterKeyAssociatedData(replacement))
            }
            header = replacement
        }
    }

    /// Carries out `rotation` (mutex held, the current master key and class keys loaded) in one
    /// write transaction; `currentPassphraseKey` is the current scrypt output (it opens the
    /// presence private key), nil for a key-file vault getting its first passphrase.
    /// `beforeCommit` runs last inside the transaction (a passphrase change's own writes).
    func rotateKeys(
        _ rotation: KeyRotation, currentPassphraseKey: SecretBytes?, beforeCommit: () throws(StoreError) -> Void = {}
    ) throws(StoreError) {
        let oldKeys = lockState.keys, oldHeader = header
        // The user's unlocked state outlives the keys it held: it is published again with the
        // new ones, when it was genuinely there (a key any process of the user could plant
        // under that name must not make a rekey publish the whenUnlocked keys).
        let userWasUnlocked = usesUserUnlock && holdsGenuineUserUnlock()
        do throws(StoreError) {
            try ledgerWrite { (transaction) throws(StoreError) in
                try database.requireHeader(rotation.replacing)
                try reseal(under: rotation, currentPassphraseKey: currentPassphraseKey, generation: transaction.generation)
                try beforeCommit()
            }
        } catch {
            lockState.replaceKeys(with: oldKeys)
            database.replaceHeader(with: oldHeader)
            throw error
        }
        // Caches of the retired keys go; the new ones are published.
        if configuration.usesKernelKeyring {
            kernelKeyring.remove(cacheDescription)
            kernelKeyring.remove(unlockedDescription)
        }
        try loadExistingClassKeys()
        publishToKernelKeyring(forUser: lockState.publishesUserUnlock || userWasUnlocked)
    }

    /// The rotation's writes, inside its transaction: everything read in clear under the old
    /// keys, then the new header, every row re-sealed under the new keys, the journal and sync
    /// state re-sealed, the ledger recounted over exactly the rows re-sealed, and the new keys'
    /// check values recorded, so that a process holding the retired keys sees the rotation as
    /// soon as it sees the commit.
    private func reseal(under rotation: KeyRotation, currentPassphraseKey: SecretBytes?, generation: UInt64) throws(StoreError) {
        var presencePair: (record: PresenceKeyRecord, privateKey: SecretBytes)?
        if let record = try storedPresenceKey(), let currentPassphraseKey {
            let vaultID = header.vaultID
            let opened = try Self.crypto { () throws(OpenSSLError) in try record.privateKey(passphraseKey: currentPassphraseKey, vaultID: vaultID) }
            guard let privateKey = opened else { throw .tampered("the presence private key does not open with the vault's passphrase") }
            presencePair = (record, privateKey)
        }
        var context = ReadContext(presenceKey: presencePair?.privateKey)
        var plaintext: [(row: ItemRow, attributes: Attributes, value: SecretBytes)] = []
        for row in try items.allRows() {
            let attributes = try decryptAttributes(row)
            let value = try open(row.value ?? [], row: row, part: .value, context: &context)
            plaintext.append((row, attributes, value))
        }
        // A row `allRows` could not decode would be left under the retired keys: refuse instead.
        guard try items.count() == plaintext.count else {
            throw .corrupted("\(location.path) has items with an unknown class or protection code; keychain recover saves the others")
        }
        // The sync journal and state are sealed under a key that follows the lookup key, and
        // the journal is keyed by identity digests: both are read now and written anew.
        let journal = try journalEntries()
        let syncState = try syncState()

        try database.storeHeader(rotation.header)
        try sql { () throws(SQLiteError) in try connection.execute("DELETE FROM class_keys; DELETE FROM meta WHERE name IN ('machine', 'keycheck')") }
        database.replaceHeader(with: rotation.header)
        lockState.replaceKeys(with: KeyRing())
        try adopt(master: rotation.master)
        if let (record, privateKey) = presencePair {
            // The same key pair, wrapped for the new salt, vouched for by the new master key.
            let rewrapped = try Self.crypto { () throws(OpenSSLError) in
                try PresenceKeyRecord(
                    privateKey: privateKey, publicKey: record.publicKey, passphraseKey: rotation.passphraseKey,
                    master: rotation.master, vaultID: rotation.header.vaultID)
            }
            try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(rewrapped.encoded())]) }
        }
        for (row, attributes, value) in plaintext {
            var sealedAttributes = attributes
            sealedAttributes.accessibility = row.accessibility
            sealedAttributes.accessControl = row.accessControl
            let sealed = try seal(row.itemClass, attributes: sealedAttributes, value: value, generation: generation)
            try overwrite(
                row, protection: row.protection, with: sealed,
                missing: "a rekey did not rewrite the row it read", generation: generation)
        }
        if let syncState { try rewriteJournal(journal, state: syncState) }
        // Every row changed, and so did the ledger's key (it follows the lookup key). The table
        // holds exactly the rows re-sealed above: the transaction let no other writer in.
        try recountLedger()
        recordKeyChecks()
        guard try storedKeyChecks() != nil else { throw .io("the new keys' check values could not be recorded; nothing was changed") }
        // This boot's record of the generation is tagged with the ledger key, which changes
        // here: the rotated vault's record goes in beside the old one before the commit, so no
        // process ever finds the rotated vault without a record it can check.
        rememberGeneration(generation, beside: true)
    }
}
