/// The lock state and the keys: unlocking, locking, the passphrase, new keys, and what the
/// vault's status says.
extension Vault {
    /// Unlocks a vault protected by a passphrase: whenUnlocked classes become readable in this
    /// process only, and afterFirstUnlock classes in every process of the user until reboot
    /// (through the kernel keyring, where it works). A vault without a passphrase is always
    /// unlocked and this does nothing. To open whenUnlocked items to the user's other
    /// processes too, as `keychain unlock` does, see ``unlock(forUser:)``.
    ///
    /// The passphrase's key derives without holding up the process's other calls on the
    /// vault; a ``lock()`` among them, while it derives, comes after this unlock and wins.
    ///
    /// - Throws: ``StoreError/wrongPassphrase`` (nothing changes), ``StoreError/tampered(_:)``
    ///   if a wrapped key fails verification, ``StoreError/noVault(path:)`` when there is no vault.
    public func unlock(passphrase: SecretBytes) throws(StoreError) {
        guard let vault = try vault(creating: false) else { throw .noVault(path: location.path) }
        try vault.unlock(passphrase: passphrase, forUser: false)
    }

    /// Unlocks the vault for the user, as on a phone the device's unlocked state serves every
    /// app: as ``unlock(passphrase:)``, and whenUnlocked items also become readable by every
    /// process of the user, without the passphrase, until ``lock()``, a reboot, or
    /// ``VaultConfiguration/userUnlockTimeout`` without use (through the kernel keyring; where it
    /// is unavailable or disabled, in this process only, as ``VaultStatus/kernelKeyring`` says).
    ///
    /// - Throws: as ``unlock(passphrase:)``; ``StoreError/unavailable(_:)`` when the vault was
    ///   locked for the user (``lockForUser()``), or in this process, while this unlock opened
    ///   it: the lock wins, and the vault stays locked in every process.
    public func unlock(forUser passphrase: SecretBytes) throws(StoreError) {
        guard let vault = try vault(creating: false) else { throw .noVault(path: location.path) }
        try vault.unlock(passphrase: passphrase, forUser: true)
    }

    /// Locks the vault in this process: the master key and the whenUnlocked class keys are wiped
    /// from memory. afterFirstUnlock items stay readable until reboot, as on iOS; see
    /// ``forgetCachedKeys()``. A vault without a passphrase unlocks itself again on next use.
    public func lock() {
        (try? vault(creating: false))??.locked { $0.lock() }
    }

    /// Locks the vault for every process of the user at once, as `keychain lock` does (and
    /// `keychain serve` on a client's `Service.Lock`, a suspend or a session lock): whenUnlocked
    /// items close in this process and in every other one at its next use, however it unlocked;
    /// a new process needs the passphrase for afterFirstUnlock items too. Where the kernel
    /// keyring is unavailable or disabled, this is ``lock()``: one process's own.
    public func lockForUser() {
        (try? vault(creating: false))??.locked { $0.lockForUser() }
    }

    /// Locks the vault and also drops the afterFirstUnlock keys, from this process and from the
    /// kernel keyring: as after a reboot, only the passphrase opens the vault again. The boot's
    /// record of the vault's newest generation stays (it opens nothing): an older copy put in
    /// the vault's place is still refused as a rollback; ``restore(from:)`` puts one back.
    public func forgetCachedKeys() {
        (try? vault(creating: false))??.locked { $0.forgetCachedKeys() }
    }

    /// Sets, changes or removes the passphrase without re-encrypting any item: only the master
    /// key is re-wrapped, in one transaction. Setting one on a vault that does not exist yet
    /// creates it.
    ///
    /// - Parameters:
    ///   - current: the current passphrase; ignored when the vault has none.
    ///   - new: the new passphrase, or nil to remove it (the vault then uses a key file, and
    ///     every whenPasscodeSetThisDeviceOnly item is destroyed, as on iOS).
    /// - Throws: ``StoreError/wrongPassphrase`` if `current` is wrong (nothing changes),
    ///   ``StoreError/invalidArgument(_:)`` for an empty new passphrase.
    public func changePassphrase(from current: SecretBytes?, to new: SecretBytes?) throws(StoreError) {
        if let new, new.count == 0 { throw .invalidArgument("the new passphrase is empty") }
        guard let vault = try vault(creating: new != nil) else { return }
        try vault.changePassphrase(from: current, to: new)
    }

    /// Gives the vault new keys: a new master key, new class keys and lookup key, every item
    /// re-sealed, in one transaction; the passphrase stays. Afterwards an old header opened
    /// with an old passphrase (or an old key file) opens nothing current, and other processes
    /// holding the retired keys are locked (they must unlock again). A vault without a
    /// passphrase gets new keys when it gets a passphrase.
    ///
    /// - Throws: ``StoreError/wrongPassphrase`` (nothing changes), ``StoreError/invalidArgument(_:)``
    ///   without a passphrase, ``StoreError/noVault(path:)``, and the errors of an item that
    ///   cannot be opened here (nothing changes).
    public func rekey(passphrase: SecretBytes) throws(StoreError) {
        guard let vault = try vault(creating: false) else { throw .noVault(path: location.path) }
        try vault.rekey(passphrase: passphrase)
    }

    /// True once the vault has a passphrase and a presence key pair (made at the first unlock).
    public var supportsAccessControl: Bool {
        ((try? vault(creating: false)) ?? nil)?.locked { $0.supportsAccessControl } ?? false
    }

    /// Whether the vault is protected by a passphrase (read from its header as last seen).
    public var hasPassphrase: Bool {
        ((try? vault(creating: false)) ?? nil)?.locked { $0.hasPassphrase } ?? false
    }

    /// Where the vault is, whether it exists and is locked, and which classes are available now.
    /// Creates nothing.
    public func status() -> VaultStatus {
        if let vault = (try? vault(creating: false)) ?? nil { return vault.locked { $0.status() } }
        return VaultStatus(
            location: location, exists: false, formatVersion: Int(VaultHeader.currentVersion), hasPassphrase: false,
            isUnlocked: true, userUnlockRemaining: nil, availableClasses: Self.classesOfANewVault, kernelKeyring: .disabled,
            machineBinding: nil, itemCount: 0, rollbackCheck: .notChecked("there is no vault"))
    }

    /// Runs SQLite's full integrity check of the vault file (every page, index and row).
    /// - Throws: ``StoreError/corrupted(_:)`` with SQLite's first complaint when it fails,
    ///   ``StoreError/noVault(path:)`` when there is no vault.
    package func verifyIntegrity() throws(StoreError) {
        guard let vault = try vault(creating: false) else { throw .noVault(path: location.path) }
        try vault.inUse { (state) throws(StoreError) in try state.verifyIntegrity() }
    }
}
