import Dispatch
import FoundationEssentials

/// The lock state and the passphrase: unlocking, locking, forgetting the cached keys, and
/// setting, changing or removing the passphrase.
extension VaultState {
    // MARK: - Lock state

    /// What an unlock reads under the vault's lock before its key derives outside it
    /// (``VaultEngine/unlock(passphrase:forUser:)``).
    struct UnlockPlan {
        /// The header the passphrase is to open; another one by the time the keys are adopted
        /// (a rekey or a passphrase change by another process) means the derivation starts again.
        let header: VaultHeader
        /// The user's lock stamp before the key derived: a lock since then still locks this unlock.
        let stamp: [UInt8]?
        /// This process's locks so far (``LockState/locks``): one more by the adoption means a
        /// lock came after this unlock.
        let locks: UInt64
    }

    /// Why an unlock for the user failed when the vault was locked while it ran.
    static let lockedWhileUnlocking =
        "the vault was locked (keychain lock, a suspend or a session lock) while this unlock opened it, and stays locked: unlock again"

    /// The first step of an unlock, under the vault's lock: what the derivation needs, and what
    /// tells a lock during it. Nil for a vault without a passphrase, which is always unlocked.
    func planUnlock() throws(StoreError) -> UnlockPlan? {
        try database.refreshHeader()
        guard case .passphrase = header.protection else { return nil }
        return UnlockPlan(header: header, stamp: currentLockStamp(), locks: lockState.locks)
    }

    /// The last step of an unlock, under the vault's lock again, with the master key and the
    /// passphrase's scrypt output `plan`'s header opened: whenUnlocked classes become readable in
    /// this process (and, `forUser`, in every process of the user for the user-unlock timeout),
    /// and afterFirstUnlock classes in every process of the user until reboot (through the kernel
    /// keyring, where it works).
    ///
    /// - Throws: ``StoreError/locked`` when the keys the plan's header opened are not current any
    ///   more (the caller derives again); ``StoreError/unavailable(_:)`` when the vault was
    ///   locked meanwhile (here, or for the user elsewhere) and `forUser`;
    ///   ``StoreError/tampered(_:)`` if a wrapped key fails verification.
    func finishUnlock(_ plan: UnlockPlan, master: SecretBytes, passphraseKey: SecretBytes, forUser: Bool) throws(StoreError) {
        try database.refreshHeader()
        guard header == plan.header else { throw .locked }
        // A lock of this process while the key derived comes after this unlock, as it did when
        // the lock waited for the unlock: nothing opens. An unlock for the user says so, as when
        // another process locked (below).
        guard lockState.locks == plan.locks else {
            if forUser { throw .unavailable(Self.lockedWhileUnlocking) }
            return
        }
        let stamp = plan.stamp
        lockState.unlocking(forUser: forUser, stamp: stamp)
        try adopt(master: master)
        // Best effort: a read-only vault still unlocks; it just cannot take presence items yet.
        // A presence record that fails its upgrade is left as it is: writes then refuse it.
        try? createPresenceKeyIfMissing(passphraseKey: passphraseKey)
        try? upgradePresenceRecord(passphraseKey: passphraseKey)
        // A format-1 vault becomes format 2 here (writes then need no passphrase);
        // damage it finds is reported by the reads and writes that meet it.
        if header.version < VaultHeader.currentVersion { try? upgrade(wrappingKey: passphraseKey) }
        try? resealCarriedRows(passphraseKey: passphraseKey)
        try loadExistingClassKeys()
        try? createUnlockedClassKeys()
        // What the kernel keyring holds before this unlock publishes: the stamp, then whether the
        // afterFirstUnlock keys are there (a lock for the user removes them before it stamps).
        let stampBeforePublishing = lockState.publishesUserUnlock ? currentLockStamp() : nil
        let cachedBeforePublishing = lockState.publishesUserUnlock && kernelKeyring.serial(of: cacheDescription) != nil
        // A rekey that committed after this unlock read the header retired what it opened:
        // those keys are neither kept nor published (the caller starts the unlock again).
        publishToKernelKeyring()
        // A lock that landed while the keys opened wins: the user's unlocked state just
        // published would open the vault again to every process (this one too). Looked at after
        // publishing, as a lock stamps before its last removal (``stampLock()``).
        if lockState.publishesUserUnlock {
            let stampNow = currentLockStamp()
            if stampNow != stamp {
                kernelKeyring.remove(unlockedDescription)
                // The afterFirstUnlock keys go too, unless they were there after the last lock:
                // a lock for the user removed them, and a new process must need the passphrase
                // again. A lock between the two looks may have removed them too.
                if !cachedBeforePublishing || stampNow != stampBeforePublishing { kernelKeyring.remove(cacheDescription) }
                lockState.lock()
                throw .unavailable(Self.lockedWhileUnlocking)
            }
        }
        startIdleTimer()
    }

    /// Makes the class keys an unlock opens that the vault has no row for yet (a fresh vault
    /// has none until its first item of each class): without them an unlock would publish
    /// nothing, and another process would find the vault as locked as before. Best effort: a
    /// read-only vault still unlocks for this process.
    private func createUnlockedClassKeys() throws(StoreError) {
        let stored = try wrappedClassKeys()
        let missing = Accessibility.allCases.filter { accessibility in
            accessibility != .whenPasscodeSetThisDeviceOnly && (accessibility.opensWithUserUnlock || accessibility.survivesLock)
                && stored[accessibility] == nil && (!accessibility.isThisDeviceOnly || machineID != nil)
        }
        guard !missing.isEmpty else { return }
        let planned = header
        try writeTransaction { () throws(StoreError) in
            try database.requireHeader(planned)
            let current = try wrappedClassKeys()
            for accessibility in missing where current[accessibility] == nil {
                do throws(StoreError) {
                    _ = try classKey(accessibility, create: true)
                } catch .boundToAnotherMachine {
                    continue
                } catch .unavailable {
                    continue
                }
            }
        }
    }

    /// Locks the vault in this process: the master key and the whenUnlocked class keys are wiped
    /// from memory. afterFirstUnlock items stay readable until reboot, as on iOS; see
    /// ``forgetCachedKeys()``. A vault without a passphrase unlocks itself again on next use.
    func lock() {
        lockState.lock()
        // As a locked device: whenUnlocked items close for every process of the user, whichever
        // way each one unlocked (the stamp), and no new process takes the user's unlocked state.
        if configuration.usesKernelKeyring {
            kernelKeyring.remove(unlockedDescription)
            stampLock()
        }
    }

    /// Locks the vault for every process of the user, as `keychain lock` and a client's
    /// `Service.Lock` do: the whenUnlocked keys go here and, at their next use, in every other
    /// process (the lock stamp); the user's unlocked state and the afterFirstUnlock keys leave the
    /// kernel keyring, so that a new process needs the passphrase. Keys a running process holds
    /// that a lock leaves (afterFirstUnlock, the lookup key) stay in it, here as everywhere.
    func lockForUser() {
        lockState.lock()
        if configuration.usesKernelKeyring {
            kernelKeyring.remove(unlockedDescription)
            kernelKeyring.remove(cacheDescription)
            stampLock()
        }
    }

    /// Locks the vault and also drops the afterFirstUnlock keys, from this process and from the
    /// kernel keyring: as after a reboot, only the passphrase opens the vault again. The boot's
    /// record of the newest generation stays: it opens nothing, and still refuses an older copy.
    func forgetCachedKeys() {
        lockState.forget()
        forgetLedgerState()
        if configuration.usesKernelKeyring {
            kernelKeyring.remove(cacheDescription)
            kernelKeyring.remove(unlockedDescription)
            stampLock()
        }
    }

    /// Sets, changes or removes the passphrase without re-encrypting any item: only the master
    /// key is re-wrapped, in one transaction.
    ///
    /// - Parameters:
    ///   - current: the current passphrase; ignored when the vault has none.
    ///   - new: the new passphrase, or nil to remove it (the vault then uses a key file, and
    ///     every whenPasscodeSetThisDeviceOnly item is destroyed, as on iOS).
    /// - Throws: ``StoreError/wrongPassphrase`` if `current` is wrong (nothing changes),
    ///   ``StoreError/invalidArgument(_:)`` for an empty new passphrase.
    ///   `opened`: the current keys, when derived outside the vault's lock.
    func changePassphrase(from current: SecretBytes?, to new: SecretBytes?, opened: OpenedMasterKey? = nil) throws(StoreError) {
        if let new, new.count == 0 { throw .invalidArgument("the new passphrase is empty") }
        try database.refreshHeader()
        let master: SecretBytes
        var currentPassphraseKey: SecretBytes?
        let hadPassphrase = header.hasPassphrase
        if hadPassphrase {
            guard let current else { throw .wrongPassphrase }
            (master, currentPassphraseKey) = try openMasterKey(passphrase: current, opened: opened)
            try adopt(master: master)
            try upgrade(wrappingKey: currentPassphraseKey!)
        } else {
            if new == nil { return }
            master = try masterKeyFromKeyFile()
            try adopt(master: master)
            try upgrade(wrappingKey: try VaultFile.readKeyFile(location.keyFilePath))
        }
        if let new, !hadPassphrase {
            // A key-file vault's first passphrase brings new keys, in the same transaction
            // as the new header: a copy of the old key file (with an old copy of the
            // header) must open nothing written from now on.
            let rotation = try KeyRotation(passphrase: new, header: header, parameters: configuration.scryptParameters)
            try rotateKeys(rotation, currentPassphraseKey: nil) { () throws(StoreError) in
                let record = try rewrappedPresenceKey(from: nil, to: rotation.passphraseKey)
                try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(record.encoded())]) }
            }
            // Overwritten before it is unlinked: the old key must not stay readable on disk.
            VaultFile.destroy(location.keyFilePath)
            startIdleTimer()
            return
        }
        var replacement = VaultHeader(version: header.version, vaultID: header.vaultID, protection: .keyFile)
        let wrappingKey: SecretBytes
        if let new {
            let salt = Random.bytes(VaultHeader.saltSize)
            replacement.protection = .passphrase(configuration.scryptParameters, salt: salt)
            wrappingKey = try Self.crypto { () throws(OpenSSLError) in
                try Scrypt.deriveKey(passphrase: new, salt: salt, parameters: configuration.scryptParameters)
            }
        } else {
            wrappingKey = SecretBytes.random(count: 32)
        }
        replacement.wrappedMasterKey = try Self.crypto { () throws(OpenSSLError) in
            try AESGCM.seal(master, key: wrappingKey, associatedData: RecordCoding.masterKeyAssociatedData(replacement))
        }
        // The lookup key (derived from the master key, which does not change) tags the presence public key.
        try adopt(master: master)
        let presenceRecord = try new == nil ? nil : rewrappedPresenceKey(from: currentPassphraseKey, to: wrappingKey)
        let planned = header
        try ledgerWrite { (transaction) throws(StoreError) in
            try database.requireHeader(planned)
            if let presenceRecord {
                try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(presenceRecord.encoded())]) }
            }
            if new == nil {
                // Written before the header that needs it; if the commit fails, the old
                // header (passphrase) still stands and the stray key file is unused.
                guard try VaultFile.createExclusively(wrappingKey, at: location.keyFilePath) else {
                    throw .untrusted(path: location.keyFilePath, reason: "a key file is already there (an old copy?); move it away, then remove the passphrase again")
                }
                let code = Int64(Accessibility.whenPasscodeSetThisDeviceOnly.code)
                // As on iOS, removing the passcode destroys what needed it: the passcode class
                // and every item behind a proof of presence, with the presence key pair.
                try delete(try items.passcodeBoundRows(code: code), in: &transaction)
                try sql { () throws(SQLiteError) in
                    try connection.statement(VaultSchema.deleteClassKey).run([.integer(code)])
                    try connection.statement(VaultSchema.deletePresenceKey).run([])
                }
            }
            try database.storeHeader(replacement)
        }
        database.replaceHeader(with: replacement)
        if new == nil {
            lockState.hold(nil, for: .whenPasscodeSetThisDeviceOnly)
        } else {
            try loadExistingClassKeys()
            publishToKernelKeyring()
            startIdleTimer()
        }
    }
}
