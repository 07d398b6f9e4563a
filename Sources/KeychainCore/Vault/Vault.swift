import FoundationEssentials
internal import KeychainSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded encrypted vault: one SQLite file per keychain, every item sealed with
/// AES-256-GCM under the key of its accessibility class, found through HMAC digests.
///
/// Reads never create anything: a vault that does not exist yet holds no items (reads find
/// nothing, ``status()`` says so), and the first write creates it, whole, with a key file
/// (no passphrase). A missing vault beside an existing key file is refused on every call
/// (``StoreError/orphanedKeyFile(vault:keyFile:)``), since it most probably means the vault
/// was moved. Files owned by another user, links, and altered schemas are refused too
/// (`VaultFile`, `VaultSchema`).
///
/// Every method is thread-safe and atomic. Several processes may share one vault.
public final class Vault: Store, Sendable {
    /// How this vault was opened.
    public let configuration: VaultConfiguration
    /// Where the vault lives.
    public var location: VaultLocation { configuration.location }

    private let session = VisibleMutex(Session())

    /// Runs `body` on the session under its lock.
    func withSession<R, E: Error>(_ body: (inout sending Session) throws(E) -> sending R) throws(E) -> sending R {
        try session.withLock(body)
    }

    /// What this process has made of the vault so far.
    struct Session {
        /// The vault, once open.
        var engine: VaultEngine?
        /// Why unlocking with the environment's passphrase failed, once it did: never tried again.
        var unlockFailure: StoreError?
        /// Whether this process has started syncing this vault in the background.
        var syncStarted = false
        /// Whether a write of this process journaled a change for sync.
        var journaledAChange = false
        /// Who is told when a write of this process journals a change.
        var journalObservers = JournalObservers()
    }

    /// Opens the vault if it exists; a missing one is created by the first write (when the
    /// configuration's ``VaultConfiguration/createIfMissing`` allows it), never by a read.
    ///
    /// - Throws: ``StoreError/untrusted(path:reason:)`` or ``StoreError/insecurePermissions(path:)``
    ///   for files another user owns or may change, or links; ``StoreError/orphanedKeyFile(vault:keyFile:)``;
    ///   ``StoreError/corrupted(_:)``, ``StoreError/tampered(_:)`` or
    ///   ``StoreError/unsupportedFormatVersion(_:)`` for a file that is not a vault this version
    ///   can use; ``StoreError/io(_:)`` for file-system failures.
    public init(_ configuration: VaultConfiguration = VaultConfiguration()) throws(StoreError) {
        self.configuration = configuration
        _ = try vault(creating: false)
    }

    /// The open vault: opened when its file exists, created first when `creating`; nil when
    /// there is none and `creating` is false.
    func vault(creating: Bool) throws(StoreError) -> VaultEngine? {
        try withSession { (session: inout sending Session) throws(StoreError) -> VaultEngine? in
            if let engine = session.engine { return engine }
            let engine = try Self.open(configuration, creating: creating)
            session.engine = engine
            return engine
        }
    }

    /// Opens the vault at the configuration's location: nil when there is none and `creating`
    /// is false; created first when `creating`.
    private static func open(_ configuration: VaultConfiguration, creating: Bool) throws(StoreError) -> VaultEngine? {
        let location = configuration.location
        try location.checkNamesAFile()
        let entry = try VaultFile.entry(location.path)
        // An empty file where a vault was: truncated, or emptied by a careless copy. Checked
        // before SQLite opens it (which could fill it from a leftover WAL).
        if case .present(let info) = entry, info.st_size == 0, case .present = try VaultFile.entry(location.keyFilePath) {
            throw .orphanedKeyFile(vault: location.path, keyFile: location.keyFilePath)
        }
        if case .missing = entry {
            if case .present(let key) = try VaultFile.entry(location.keyFilePath) {
                // A key file seconds old with no vault yet is most probably another process
                // creating this vault right now (it links the key file, then at once the
                // vault): wait for it.
                if Self.isFresh(key), VaultFile.waitForFile(location.path) {
                    return try VaultEngine(configuration)
                }
                // Or a creation killed between the two links: its finished vault waits under
                // its temporary name. A write finishes the creation; a read finds no vault yet.
                guard let interrupted = VaultState.interruptedCreation(location, forWrite: creating) else {
                    throw .orphanedKeyFile(vault: location.path, keyFile: location.keyFilePath)
                }
                guard creating, try VaultState.finishInterruptedCreation(interrupted, location) else { return nil }
                return try VaultEngine(configuration)
            }
            guard creating else { return nil }
            guard configuration.createIfMissing else { throw .noVault(path: location.path) }
            try VaultState.create(configuration)
        }
        return try VaultEngine(configuration)
    }

    /// Whether a file was changed within the last few seconds.
    private static func isFresh(_ info: stat) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now.tv_sec - info.st_mtim.tv_sec < 10
    }

    /// The open vault, for backups, verification and sync (nil when there is none).
    func openedIfPresent() throws(StoreError) -> VaultEngine? { try vault(creating: false) }

    /// Runs `body` on the open vault (created first when `creating`, as a first write would),
    /// unlocking once with the configured passphrase if it finds the vault locked.
    ///
    /// - Throws: ``StoreError/noVault(path:)`` when there is none and `creating` is false.
    func withOpened<R>(creating: Bool, _ body: (VaultEngine) throws(StoreError) -> R) throws(StoreError) -> R {
        guard let vault = try vault(creating: creating) else { throw .noVault(path: location.path) }
        return try retryingAfterUnlock(vault) { () throws(StoreError) in try body(vault) }
    }

    // MARK: - Store

    /// What a new vault (a key file, no passphrase) makes available.
    static let classesOfANewVault = Accessibility.allCases.filter { $0 != .whenPasscodeSetThisDeviceOnly }

    public func isAvailable(_ accessibility: Accessibility) -> Bool {
        switch Result(catching: { () throws(StoreError) in try vault(creating: false) }) {
        case .success(let vault?):
            if vault.locked({ $0.isAvailable(accessibility) }) { return true }
            return (try? unlockWithConfiguredPassphrase(vault)) == true && vault.locked { $0.isAvailable(accessibility) }
        case .success(nil): return Self.classesOfANewVault.contains(accessibility)
        case .failure: return false
        }
    }

    public func copyMatching(_ query: Query) throws(StoreError) -> [Item] {
        try finding(query) { (vault: VaultEngine) throws(StoreError) in try vault.copyMatching(query) }
    }

    /// Hands each match to `body` as the vault reads it. A query that returns values lists them
    /// first (a value behind an access control may need a proof of presence, asked outside the
    /// vault's lock); `body` runs under the vault's lock and must not call the vault.
    public func forEachMatching(_ query: Query, _ body: (Item) throws(StoreError) -> Void) throws(StoreError) {
        guard !query.returnData else {
            for item in try copyMatching(query) { try body(item) }
            return
        }
        try finding(query) { (vault: VaultEngine) throws(StoreError) in
            try vault.inUse { (state) throws(StoreError) in try state.forEachMatching(query, body) }
        }
    }

    /// Runs a read that finds items: a valid query, a vault that exists (none finds nothing), sync
    /// started for a synchronizable query, and one unlock with the environment's passphrase if
    /// the vault turns out locked.
    private func finding<R>(_ query: Query, _ read: (VaultEngine) throws(StoreError) -> R) throws(StoreError) -> R {
        try query.validate()
        guard let vault = try vault(creating: false) else { throw noVaultYet() }
        if query.attributes.synchronizable == true { syncInBackground(vault) }
        return try retryingAfterUnlock(vault) { () throws(StoreError) in try read(vault) }
    }

    public func contains(_ query: Query) throws(StoreError) -> Bool {
        try query.validate()
        guard let vault = try vault(creating: false) else {
            _ = noVaultYet()
            return false
        }
        return try retryingAfterUnlock(vault) { () throws(StoreError) in
            try vault.inUse { (state) throws(StoreError) in try state.contains(query) }
        }
    }

    /// What a read of a vault that does not exist finds: nothing. When no write could create it
    /// either (its directory is missing: a mistyped path), that reason is logged with
    /// `KEYCHAIN_LOG`, once, since "not found" alone would hide it.
    private func noVaultYet() -> StoreError {
        if let why = location.missingDirectory { FailureLog.warnOnce("no vault at \(location.path): \(why)") }
        return .itemNotFound
    }

    /// Runs `body`; if it finds the vault locked and the configuration names where a passphrase
    /// is (``VaultConfiguration/passphraseEnvironment``), unlocks with it and runs `body` again.
    /// A rotation by another process between the unlock and the retry locks this one again:
    /// it unlocks again, a few times, rather than report a locked vault it can open.
    private func retryingAfterUnlock<R>(_ vault: VaultEngine, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        for _ in 1..<RotationRetry.attempts {
            do throws(StoreError) {
                return try body()
            } catch .locked {
                guard try unlockWithConfiguredPassphrase(vault) else { throw .locked }
            }
        }
        return try body()
    }

    /// Unlocks with the passphrase the environment offers (``Unlocker``, without a prompt); false
    /// when it offers none (or this vault needs none).
    /// Again after each idle lock, but never again after a failure: a wrong or unreadable
    /// passphrase must not cost scrypt on every call.
    /// The failure is thrown again each time, so a caller never sees a bare "locked" where the
    /// reason was a wrong or unreadable passphrase.
    private func unlockWithConfiguredPassphrase(_ vault: VaultEngine) throws(StoreError) -> Bool {
        guard let environment = configuration.passphraseEnvironment, vault.locked({ $0.hasPassphrase }) else { return false }
        if let failure = withSession({ $0.unlockFailure }) { throw failure }
        do {
            return try Unlocker(environment: environment).unlock { (passphrase) throws(StoreError) in
                try vault.unlock(passphrase: passphrase, forUser: false)
            }
        } catch {
            // A rotation racing the unlock is worth another try; a wrong or unreadable passphrase is not.
            if error != .locked { withSession { $0.unlockFailure = error } }
            throw error
        }
    }

    @discardableResult
    public func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteResult {
        for operation in operations { try operation.validate() }
        let adds = operations.contains { if case .add = $0 { true } else if case .upsert = $0 { true } else { false } }
        if let vault = try vault(creating: adds) {
            let outcome = try retryingAfterUnlock(vault) { () throws(StoreError) in
                try vault.inUse { (state) throws(StoreError) in try state.write(operations) }
            }
            if outcome.journaled { journaled(vault) }
            return outcome.result
        }
        // Only updates and deletes, and no vault: nothing to change, as in an empty vault.
        var counts: [Int] = []
        for operation in operations {
            if case .update = operation { throw .itemNotFound }
            counts.append(0)
        }
        return WriteResult(counts: counts)
    }
}
