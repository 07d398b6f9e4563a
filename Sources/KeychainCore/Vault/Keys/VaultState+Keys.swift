import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The master and lookup keys: from the key file, a passphrase or the kernel keyring, with
/// the key checks that mark a rotation, and a use as the idle lock counts it.
extension VaultState {
    func lookupKey() throws(StoreError) -> HMACKey {
        if let lookup = lockState.keys.lookup { return lookup }
        try loadImplicitKeys()
        guard let lookup = lockState.keys.lookup else { throw .locked }
        return lookup
    }

    /// Loads what needs no passphrase: a key-file vault's master key, or the afterFirstUnlock
    /// keys another process left in the kernel keyring.
    func loadImplicitKeys() throws(StoreError) {
        if lockState.keys.master != nil { return }
        switch header.protection {
        case .keyFile:
            let master: SecretBytes
            do {
                master = try masterKeyFromKeyFile()
            } catch {
                // Another process may have set a passphrase and removed the key file.
                try database.refreshHeader()
                if header.hasPassphrase { return try loadImplicitKeys() }
                throw error
            }
            try adopt(master: master)
        case .passphrase:
            guard configuration.usesKernelKeyring else { return }
            if lockState.keys.lookup == nil, let payload = kernelKeyring.load(cacheDescription) {
                _ = try adoptChecked(payload, allowed: { $0.survivesLock })
            }
            guard usesUserUnlock, !lockState.keys.classes.keys.contains(where: \.opensWithUserUnlock) else { return }
            // Read before the user's unlocked state: a lock between the two reads locks this process at its next use.
            let stamp = currentLockStamp()
            if let stored = kernelKeyring.load(unlockedDescription), let (timeout, payload) = Self.splitUnlockedPayload(stored),
                try adoptChecked(payload, allowed: { $0.opensWithUserUnlock })
            {
                lockState.tookUserUnlock(timeout: timeout, stamp: stamp, at: ContinuousClock.now)
                kernelKeyring.refresh(unlockedDescription, timeout: timeout)
            }
        }
    }

    /// Adopts the keys of a kernel-keyring payload only if every one of them has the check value
    /// the vault records (``KeyCheck``); a planted or stale payload is ignored.
    func adoptChecked(_ payload: SecretBytes, allowed: (Accessibility) -> Bool) throws(StoreError) -> Bool {
        var candidate = KeyRing()
        guard candidate.adopt(cachePayload: payload, allowed: allowed) else { return false }
        let bytes = try storedKeyChecks()
        guard let bytes, let stored = KeyCheck.decode(bytes), KeyCheck.verify(candidate, against: stored, vaultID: header.vaultID) else { return false }
        // Another lookup key than the one this process holds: not this vault's cache.
        if let lookup = lockState.keys.lookup, !Digest.equal(lookupCheck(lookup), lookupCheck(candidate.lookup!)) { return false }
        lockState.adoptMissing(from: candidate)
        return true
    }

    /// The vault's recorded check values (``KeyCheck``) as stored; nil when none are recorded.
    func storedKeyChecks() throws(StoreError) -> [UInt8]? {
        try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readKeyCheck).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }
    }

    /// The check value of `lookup` as a lookup key of this vault.
    func lookupCheck(_ lookup: HMACKey) -> [UInt8] {
        KeyCheck.value(of: lookup.key, code: KeyCheck.lookupCode, vaultID: header.vaultID)
    }

    /// Records the check values of the keys this process unwrapped with the master key, so that
    /// other processes can trust them from the cache. Best effort: a read-only vault keeps its
    /// old checks (and other processes then need the passphrase). False when the vault's
    /// recorded lookup key is another one: this process's keys were retired by a rotation, and
    /// must be neither recorded nor published.
    @discardableResult
    func recordKeyChecks() -> Bool {
        guard lockState.keys.master != nil else { return true }
        let checks = KeyCheck.values(of: lockState.keys, vaultID: header.vaultID)
        var current = true
        // Read, compared and written in one transaction: a rotation committing in between
        // must not have its checks replaced by this process's retired ones.
        let record = { () throws(StoreError) in
            let stored = try self.storedKeyChecks()
            var merged = stored.flatMap(KeyCheck.decode) ?? [:]
            // A lookup key's check changes only with a rotation, which records it in its own
            // transaction: a process whose keys another process retired (its unlock read the
            // header before that rotation committed) must not put its retired checks back.
            if let recorded = merged[KeyCheck.lookupCode], let mine = checks[KeyCheck.lookupCode], !Digest.equal(recorded, mine) {
                current = false
                return
            }
            merged.merge(checks) { $1 }
            let encoded = KeyCheck.encode(merged)
            guard encoded != stored else { return }
            try self.sql { () throws(SQLiteError) in try self.connection.statement(VaultSchema.writeKeyCheck).run([.blob(encoded)]) }
        }
        if connection.isInTransaction { try? record() } else { try? writeTransaction(record) }
        return current
    }

    func adopt(master: SecretBytes) throws(StoreError) {
        lockState.adopt(master: master, lookup: try Self.lookupKey(master: master))
    }

    static func lookupKey(master: SecretBytes) throws(StoreError) -> HMACKey {
        HMACKey(try crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: master, info: "swift-keychain lookup v1") })
    }

    func masterKeyFromKeyFile() throws(StoreError) -> SecretBytes {
        let keyFile = try VaultFile.readKeyFile(location.keyFilePath)
        guard keyFile.count == 32 else { throw .corrupted("the key file \(location.keyFilePath) has the wrong size") }
        do {
            return try AESGCM.open(header.wrappedMasterKey, key: keyFile, associatedData: RecordCoding.masterKeyAssociatedData(header))
        } catch {
            throw .tampered("the master key does not open with the key file (header or key file altered)")
        }
    }

    /// The master key, and the passphrase's scrypt output (nil for a key-file vault).
    func openMasterKey(passphrase: SecretBytes) throws(StoreError) -> (SecretBytes, SecretBytes?) {
        guard case .passphrase = header.protection else { return (try masterKeyFromKeyFile(), nil) }
        let (master, passphraseKey) = try Self.openMasterKey(passphrase: passphrase, header: header)
        return (master, passphraseKey)
    }

    /// A master key and the passphrase's scrypt output, opened outside the vault's lock against
    /// `header` (``VaultEngine``): used only while the vault's header is still that one.
    struct OpenedMasterKey {
        let header: VaultHeader
        let master: SecretBytes
        let passphraseKey: SecretBytes
    }

    /// As ``openMasterKey(passphrase:)``, taking `opened` instead when it was opened against the
    /// current header; another process's rotation or passphrase change since then makes it
    /// derive again, here.
    func openMasterKey(passphrase: SecretBytes, opened: OpenedMasterKey?) throws(StoreError) -> (SecretBytes, SecretBytes?) {
        if let opened, opened.header == header { return (opened.master, opened.passphraseKey) }
        return try openMasterKey(passphrase: passphrase)
    }

    /// The master key `header` wraps, and the passphrase's scrypt output: needs no open vault,
    /// so that the derivation can run outside the vault's lock.
    ///
    /// - Throws: ``StoreError/wrongPassphrase``, also for a header without a passphrase.
    static func openMasterKey(passphrase: SecretBytes, header: VaultHeader) throws(StoreError) -> (master: SecretBytes, passphraseKey: SecretBytes) {
        guard case .passphrase(let parameters, let salt) = header.protection else { throw .wrongPassphrase }
        let derived = try crypto { () throws(OpenSSLError) in
            try Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        }
        do {
            return (try AESGCM.open(header.wrappedMasterKey, key: derived, associatedData: RecordCoding.masterKeyAssociatedData(header)), derived)
        } catch {
            // Indistinguishable by design from an altered salt or parameter; the header's
            // checksum already caught accidental damage.
            throw .wrongPassphrase
        }
    }

    /// Records a use for the idle lock: a passphrase vault unused past its deadline locks first.
    func touch() {
        lockState.use(at: ContinuousClock.now, hasPassphrase: header.hasPassphrase)
    }

    /// Starts the idle lock of a passphrase vault just unlocked (``LockState/startIdleTimer(hasPassphrase:)``).
    func startIdleTimer() {
        lockState.startIdleTimer(hasPassphrase: header.hasPassphrase)
    }
}
