import Dispatch
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// An existing vault file, open: the key bag, the item table and the lock state over one
/// SQLite connection. ``Vault`` is the public face over it, and the only place a vault file
/// is created (``create(_:)``); this type only ever opens files that exist, after checking
/// their owner, type, mode and schema.
///
/// Key hierarchy, after Apple's Data Protection: a random master key, wrapped by the vault key
/// (from a passphrase through scrypt, or from a random key file beside the vault when there is
/// no passphrase); a random key per accessibility class, wrapped by a key derived from the
/// master key (bound to the machine for ThisDeviceOnly classes).
///
/// Every method is thread-safe and atomic. Several processes may share one vault: writes take
/// SQLite's write lock (`BEGIN IMMEDIATE`) and wait for each other.
final class OpenVault: @unchecked Sendable {
    /// How this vault was opened.
    let configuration: VaultConfiguration
    /// Where the vault lives.
    var location: VaultLocation { configuration.location }

    // All mutable state below is guarded by `mutex`; SQLite runs in multi-thread mode and relies on it.
    let mutex = Lock()
    let connection: Connection
    var header: VaultHeader
    var keys = KeyRing()
    var lastUse = ContinuousClock.now
    var idleTimer: DispatchSourceTimer?
    var kernelKeyringState: VaultStatus.KernelKeyringState?
    let kernelKeyring = KernelKeyring()
    /// Read on first need: only ThisDeviceOnly classes use it, and most opens touch none.
    lazy var machineID: [UInt8]? = configuration.machineIdentity.read()
    /// This boot, as every write stamps it (``recordingBoot``); read once.
    lazy var boot: [UInt8]? = configuration.bootIdentity.read()
    var identityMemo: [IdentityMemoKey: [UInt8]] = [:]
    /// The unwrapped presence private key for the read in progress (set and cleared under `mutex`).
    var presenceKey: SecretBytes?
    /// The access control of the item a read found it could not open without a proof.
    var presenceNeeded: AccessControl?
    /// Whether this process holds whenUnlocked keys only through the user's unlocked state (not
    /// its own passphrase), and when that state was last confirmed.
    var heldThroughUserUnlock = false
    /// Whether this process's last unlock asked to open whenUnlocked items to the user's other
    /// processes (``Vault/unlock(forUser:)``, `keychain unlock`): only then is the user's
    /// unlocked state published. A passphrase from a file, a credential or a prompt opens the
    /// vault for the process that read it.
    var publishesUserUnlock = false
    /// The idle timeout the unlocking process chose, which every use keeps (not the reader's own).
    var heldUnlockTimeout: UInt32 = 1
    var userUnlockConfirmed = ContinuousClock.now
    /// The item ledger as last verified (from format 2 on), and the file's `data_version` then:
    /// while no other connection commits, what was verified stays true without a new scan.
    var ledger: LedgerState?
    var ledgerDataVersion: Int64 = -1
    /// The lookups through the scope index whose row count matched the table's, at the
    /// `data_version` they were counted at (``confirmScopeIndex(returned:values:byProtection:counted:)``).
    var scopeLookupsConfirmed: (dataVersion: Int64, lookups: Set<[UInt8]>) = (-1, [])
    /// The generation the write in progress gives the rows it seals.
    var writeGeneration: UInt64 = 0
    /// Whether the vault has a sync journal (``VaultSchema/syncObjects``), as last checked.
    var syncEnrolled = false
    /// The synchronizable items the write in progress changed, journaled before it commits.
    var journalChanges: [SyncChange] = []
    /// Set while a pull applies changes from elsewhere: they are journaled as received, not pending.
    var applyingRemoteChanges = false
    /// Whether the last write journaled a synchronizable change (then ``syncWake`` was called).
    var journaledLastWrite = false
    /// Called after each write that journaled a change: the sync engine running in this
    /// process sends it at once.
    var syncWake: (@Sendable () -> Void)?

    /// Opens the existing vault at the configuration's location.
    ///
    /// - Throws: ``StoreError/untrusted(path:reason:)`` or ``StoreError/insecurePermissions(path:)``
    ///   for files another user owns or may change, or that are links; ``StoreError/corrupted(_:)``
    ///   for a file that is not a vault (empty, truncated, another database);
    ///   ``StoreError/tampered(_:)`` for a vault whose schema was altered (a trigger, a view...);
    ///   ``StoreError/unsupportedFormatVersion(_:)``; ``StoreError/io(_:)`` for file-system failures.
    init(_ configuration: VaultConfiguration) throws(StoreError) {
        self.configuration = configuration
        let location = configuration.location
        // A process whose OpenSSL cannot start would find every checksum wrong: say so instead.
        if let failure = OpenSSLConfiguration.initialisationFailure { throw .unavailable(failure) }
        try VaultFile.checkAll(location)
        do {
            connection = try Connection(path: location.path, create: false)
        } catch {
            throw Self.map(error, path: location.path)
        }
        let schema = try VaultSchema.check(connection, path: location.path)
        syncEnrolled = schema.synced
        guard let bytes = try Self.storedHeader(in: connection) else {
            throw .corrupted("\(location.path) has a vault's tables but no header")
        }
        header = try VaultHeader.decode(bytes)
        try Self.checkFormat(schema: schema.format, header: header, path: location.path)
    }

    /// A header and a schema of different formats: one of them was replaced. (Format 3 has
    /// format 2's tables.)
    static func checkFormat(schema: Int, header: VaultHeader, path: String) throws(StoreError) {
        guard schema == min(Int(header.version), 2) else {
            throw .tampered("\(path) has a format-\(header.version) header over a format-\(schema) item table; refusing to use it")
        }
    }

    deinit {
        idleTimer?.cancel()
    }

    // MARK: - Lock state

    /// Unlocks a vault protected by a passphrase: whenUnlocked classes become readable in this
    /// process (and, `forUser`, in every process of the user for the user-unlock timeout), and
    /// afterFirstUnlock classes in every process of the user until reboot (through the kernel
    /// keyring, where it works). A vault without a passphrase is always unlocked and this does
    /// nothing.
    ///
    /// - Throws: ``StoreError/wrongPassphrase`` (nothing changes), ``StoreError/tampered(_:)``
    ///   if a wrapped key fails verification.
    func unlock(passphrase: SecretBytes, forUser: Bool = false) throws(StoreError) {
        try withState { () throws(StoreError) in
            // Another process may rotate the keys between this one's read of the header and of
            // the class keys: the passphrase is right, the header it opened is not current.
            for _ in 1..<Self.unlockAttempts {
                do throws(StoreError) {
                    return try unlockLocked(passphrase: passphrase, forUser: forUser)
                } catch .locked {
                    continue
                }
            }
            try unlockLocked(passphrase: passphrase, forUser: forUser)
        }
    }

    /// How often an unlock (or a write that unlocks on need) starts again when a rotation
    /// elsewhere overtakes it. Each new attempt follows another process's committed rotation, so
    /// the bound only ends a run of rotations back to back, as an owner rekeying in a loop makes.
    static let unlockAttempts = 16

    /// The unlock itself (mutex held).
    private func unlockLocked(passphrase: SecretBytes, forUser: Bool) throws(StoreError) {
        try refreshHeader()
        guard case .passphrase = header.protection else { return }
        let (master, passphraseKey) = try openMasterKey(passphrase: passphrase)
        publishesUserUnlock = forUser
        try adopt(master: master)
        // Best effort: a read-only vault still unlocks; it just cannot take presence items yet.
        // A presence record that fails its upgrade is left as it is: writes then refuse it.
        if let passphraseKey {
            try? createPresenceKeyIfMissing(passphraseKey: passphraseKey)
            try? upgradePresenceRecord(passphraseKey: passphraseKey)
            // A format-1 vault becomes format 2 here (writes then need no passphrase);
            // damage it finds is reported by the reads and writes that meet it.
            if header.version < VaultHeader.currentVersion { try? upgrade(wrappingKey: passphraseKey) }
            try? resealCarriedRows(passphraseKey: passphraseKey)
        }
        try loadExistingClassKeys()
        // A rekey that committed after this unlock read the header retired what it opened:
        // those keys are neither kept nor published (the caller starts the unlock again).
        publishToKernelKeyring()
        startIdleTimer()
    }

    /// Locks the vault in this process: the master key and the whenUnlocked class keys are wiped
    /// from memory. afterFirstUnlock items stay readable until reboot, as on iOS; see
    /// ``forgetCachedKeys()``. A vault without a passphrase unlocks itself again on next use.
    func lock() {
        mutex.withLock {
            lockKeys()
            // As a locked device: whenUnlocked items close for every process of the user.
            if configuration.usesKernelKeyring { kernelKeyring.remove(unlockedDescription) }
        }
    }

    /// Locks the vault and also drops the afterFirstUnlock keys, from this process and from the
    /// kernel keyring: as after a reboot, only the passphrase opens the vault again. The boot's
    /// record of the newest generation stays: it opens nothing, and still refuses an older copy.
    func forgetCachedKeys() {
        mutex.withLock {
            lockKeys()
            keys.wipeAll()
            forgetLedgerState()
            if configuration.usesKernelKeyring {
                kernelKeyring.remove(cacheDescription)
                kernelKeyring.remove(unlockedDescription)
            }
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
    func changePassphrase(from current: SecretBytes?, to new: SecretBytes?) throws(StoreError) {
        if let new, new.count == 0 { throw .invalidArgument("the new passphrase is empty") }
        try withState { () throws(StoreError) in
            try refreshHeader()
            let master: SecretBytes
            var currentPassphraseKey: SecretBytes?
            let hadPassphrase = header.hasPassphrase
            if hadPassphrase {
                guard let current else { throw .wrongPassphrase }
                (master, currentPassphraseKey) = try openMasterKey(passphrase: current)
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
            try ledgerWrite { () throws(StoreError) in
                try requireHeader(planned)
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
                    let doomed = try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.selectPasscodeBound(format: Int(header.version))) }
                    try delete(try fetch(doomed, [.integer(code)], includeValue: false, limit: nil))
                    try sql { () throws(SQLiteError) in
                        try connection.statement(VaultSchema.deleteClassKey).run([.integer(code)])
                        try connection.statement(VaultSchema.deletePresenceKey).run([])
                    }
                }
                try sql { () throws(SQLiteError) in
                    try connection.statement(VaultSchema.writeHeader).run([.blob(replacement.encoded())])
                }
            }
            header = replacement
            if new == nil {
                keys.classes[.whenPasscodeSetThisDeviceOnly] = nil
            } else {
                try loadExistingClassKeys()
                publishToKernelKeyring()
                startIdleTimer()
            }
        }
    }

    /// True once the vault has a passphrase and a presence key pair (made at the first unlock).
    var supportsAccessControl: Bool {
        mutex.withLock {
            try? refreshHeader()
            return header.hasPassphrase && (try? storedPresenceKey()) != nil
        }
    }

    /// Whether the vault is protected by a passphrase (read from its header as last seen).
    var hasPassphrase: Bool {
        mutex.withLock { header.hasPassphrase }
    }

    /// Where the vault is, whether it is locked, and which classes are available now.
    func status() -> VaultStatus {
        mutex.withLock {
            try? refreshHeader()
            try? loadImplicitKeys()
            let available = Accessibility.allCases.filter { classAvailable($0) }
            let count = (try? storedItemCount()) ?? 0
            return VaultStatus(
                location: location, exists: true,
                formatVersion: Int(header.version),
                hasPassphrase: header.hasPassphrase,
                isUnlocked: keys.master != nil || keys.classes[.whenUnlocked] != nil,
                userUnlockRemaining: usesUserUnlock ? kernelKeyring.remaining(unlockedDescription) : nil,
                availableClasses: available,
                kernelKeyring: currentKernelKeyringState(),
                machineBinding: machineID == nil ? "no machine id (/etc/machine-id): ThisDeviceOnly classes are unavailable" : nil,
                itemCount: count, rollbackCheck: rollbackCheck())
        }
    }

    /// Writes one consistent snapshot of the whole vault, what its WAL holds included, into the
    /// empty file at `path` (SQLite's `VACUUM INTO`), while other connections go on.
    func snapshot(into path: String) throws(StoreError) {
        try withState { () throws(StoreError) in
            try sql { () throws(SQLiteError) in try connection.statement("VACUUM INTO ?").run([.text(path)]) }
        }
    }

    /// Runs SQLite's full integrity check of the vault file (every page, index and row).
    /// - Throws: ``StoreError/corrupted(_:)`` with SQLite's first complaint when it fails.
    func verifyIntegrity() throws(StoreError) {
        let report = try withState { () throws(StoreError) -> String in try integrityReport() }
        guard report == "ok" else { throw .corrupted("integrity check: \(report)") }
    }

    /// SQLite's `PRAGMA integrity_check` (mutex held): "ok", or its first complaint.
    func integrityReport() throws(StoreError) -> String {
        try sql { () throws(SQLiteError) -> String in
            try connection.statement("PRAGMA integrity_check").with([]) { (s: Statement) throws(SQLiteError) -> String in
                try s.step() ? s.text(0) : "no answer"
            }
        }
    }
}

extension StoreError {
    /// Whether the error means the stored bytes are damaged or altered.
    var isDamage: Bool {
        switch self {
        case .tampered, .corrupted: true
        default: false
        }
    }

    /// Whether the error means "this item's key is not available here", as opposed to damage.
    var isUnavailableKey: Bool {
        switch self {
        case .locked, .boundToAnotherMachine, .passphraseRequired, .unavailable: true
        default: false
        }
    }
}

/// What an identity digest depends on: the class and the attributes it was computed from.
struct IdentityMemoKey: Hashable {
    let itemClass: ItemClass
    let attributes: Attributes

    // Equal keys have equal attributes, hence equal fields here; hashing these few (what tells
    // items apart in practice) instead of all twenty-three costs a quarter of the lookup.
    func hash(into hasher: inout Hasher) {
        hasher.combine(itemClass)
        hasher.combine(attributes.account)
        hasher.combine(attributes.service)
        hasher.combine(attributes.server)
    }
}
