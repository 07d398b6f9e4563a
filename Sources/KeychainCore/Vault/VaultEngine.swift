import Synchronization

/// An existing vault file, open: its state (``VaultState``: the connection, the header, the key
/// bag, the item ledger, the sync journal) behind one lock, and every operation a closure over
/// that state under it. ``Vault`` is the public face over it, and the only place a vault file
/// is created (``VaultState/create(_:)``); this type only ever opens files that exist, after
/// checking their owner, type, mode and schema.
///
/// Every method is thread-safe and atomic. Several processes may share one vault: writes take
/// SQLite's write lock (`BEGIN IMMEDIATE`) and wait for each other.
final class VaultEngine: Sendable {
    /// How this vault was opened.
    let configuration: VaultConfiguration
    /// Where the vault lives.
    var location: VaultLocation { configuration.location }
    /// The vault's id, which no rotation or passphrase change alters.
    let vaultID: [UInt8]
    private let state: Mutex<VaultState>

    /// Opens the existing vault at the configuration's location.
    ///
    /// - Throws: as ``VaultState/init(_:)``.
    init(_ configuration: VaultConfiguration) throws(StoreError) {
        self.configuration = configuration
        let opened = try VaultState(configuration)
        vaultID = opened.header.vaultID
        state = Mutex(opened)
        locked { $0.onIdle = { [weak self] timeout in self?.lockIfIdle(after: timeout) } }
    }

    /// Runs `body` under the vault's lock as one use of the vault: a vault idle past its
    /// timeout locks first, and keys held through the user's unlocked state follow it.
    func inUse<R>(_ body: (VaultState) throws(StoreError) -> sending R) throws(StoreError) -> sending R {
        try state.withLock { (state: inout sending VaultState) throws(StoreError) -> sending R in
            SanitizerVisibility.acquired(self)
            defer { SanitizerVisibility.releasing(self) }
            state.touch()
            state.followLockStamp()
            state.followUserUnlock()
            return try body(state)
        }
    }

    /// Runs `body` under the vault's lock without counting as a use (locking, status).
    func locked<R>(_ body: (VaultState) -> sending R) -> sending R {
        state.withLock { (state: inout sending VaultState) -> sending R in
            SanitizerVisibility.acquired(self)
            defer { SanitizerVisibility.releasing(self) }
            return body(state)
        }
    }

    /// The idle timer's check: locks when the vault went unused for `timeout`.
    private func lockIfIdle(after timeout: Duration) {
        locked { state in if state.keyBag.isIdle(at: ContinuousClock.now, for: timeout) { state.lockKeys() } }
    }

    // MARK: - Lock state and keys

    /// Unlocks with the passphrase (``VaultState/unlock(passphrase:forUser:)``).
    func unlock(passphrase: SecretBytes, forUser: Bool = false) throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.unlock(passphrase: passphrase, forUser: forUser) }
    }

    /// Locks the vault in this process (``Vault/lock()``).
    func lock() { locked { $0.lock() } }

    /// Locks for every process of the user (``Vault/lockForUser()``).
    func lockForUser() { locked { $0.lockForUser() } }

    /// Locks and drops the afterFirstUnlock keys too (``Vault/forgetCachedKeys()``).
    func forgetCachedKeys() { locked { $0.forgetCachedKeys() } }

    /// Sets, changes or removes the passphrase (``Vault/changePassphrase(from:to:)``).
    func changePassphrase(from current: SecretBytes?, to new: SecretBytes?) throws(StoreError) {
        if let new, new.count == 0 { throw .invalidArgument("the new passphrase is empty") }
        try inUse { (state) throws(StoreError) in try state.changePassphrase(from: current, to: new) }
    }

    /// Rotates every key (``Vault/rekey(passphrase:)``).
    func rekey(passphrase: SecretBytes) throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.rekey(passphrase: passphrase) }
    }

    /// Asks the context's authenticator for the passphrase and unwraps the presence private
    /// key with it; scrypt runs outside the vault's lock.
    func presenceProof(for accessControl: AccessControl, context: AuthenticationContext) throws(StoreError) -> SecretBytes {
        guard !context.interactionNotAllowed else { throw .interactionNotAllowed }
        if accessControl.needsBiometry && !context.authenticator.offersBiometry {
            throw .unavailable("this item needs a biometric proof (\(accessControl)) and the authenticator offers none")
        }
        let request = PresenceRequest(reason: context.localizedReason, accessControl: accessControl, vaultPath: location.path)
        let passphrase: SecretBytes
        do {
            passphrase = try context.authenticator.authenticate(request)
        } catch {
            switch error {
            case .cancelled: throw .userCancelled
            case .unavailable(let why): throw .unavailable(why)
            }
        }
        let (protection, record) = try inUse { (state) throws(StoreError) -> (VaultHeader.Protection, PresenceKeyRecord?) in
            try state.database.refreshHeader()
            return (state.header.protection, try state.storedPresenceKey())
        }
        guard case .passphrase(let parameters, let salt) = protection, let record else { throw .passphraseRequired }
        let vaultID = vaultID
        let privateKey = try VaultState.crypto { () throws(OpenSSLError) -> SecretBytes? in
            try record.privateKey(passphraseKey: Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters), vaultID: vaultID)
        }
        guard let privateKey else { throw .authenticationFailed }
        context.keep(privateKey, for: vaultID)
        return privateKey
    }

    /// The owner's word that this copy is the current one (``Vault/acceptCurrentGeneration()``).
    func acceptCurrentGeneration() throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.acceptCurrentGeneration() }
    }

    // MARK: - Status

    /// True once the vault has a passphrase and a presence key pair (made at the first unlock).
    var supportsAccessControl: Bool { locked { $0.supportsAccessControl } }

    /// Whether the vault is protected by a passphrase (read from its header as last seen).
    var hasPassphrase: Bool { locked { $0.hasPassphrase } }

    /// Where the vault is, whether it is locked, and which classes are available now.
    func status() -> VaultStatus {
        locked { state in
            state.followLockStamp()
            return state.status()
        }
    }

    /// Whether items of `accessibility` can be read and written now.
    func isAvailable(_ accessibility: Accessibility) -> Bool {
        locked { state in
            state.followLockStamp()
            state.noticeUserUnlockEnded()
            return state.isAvailable(accessibility)
        }
    }

    /// Writes one consistent snapshot of the whole vault into the empty file at `path`.
    func snapshot(into path: String) throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.snapshot(into: path) }
    }

    /// Runs SQLite's full integrity check (``Vault/verifyIntegrity()``).
    func verifyIntegrity() throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.verifyIntegrity() }
    }

    /// Checks the file and tries every item (``Vault/verify()``).
    func verify() throws(StoreError) -> VaultReport {
        try inUse { (state) throws(StoreError) in try state.verify() }
    }

    /// Every item that opens here, with its value; how many did not (``Vault/recover(to:passphrase:)``).
    func openableItems() throws(StoreError) -> (items: [Item], leftBehind: Int) {
        try inUse { (state) throws(StoreError) in try state.openableItems() }
    }

    // MARK: - Items

    /// Finds items; with `returnData`, values behind an ``AccessControl`` are decrypted only
    /// after the query's ``AuthenticationContext`` (or the default authenticator) gives the
    /// proof, asked for once per call, outside the vault's lock.
    ///
    /// - Throws: ``StoreError/userCancelled``, ``StoreError/authenticationFailed`` or
    ///   ``StoreError/interactionNotAllowed`` for such values, besides the usual errors.
    func copyMatching(_ query: Query) throws(StoreError) -> [Item] {
        var proof: SecretBytes?
        while true {
            let given = proof
            switch try inUse({ (state) throws(StoreError) in try state.copyMatching(query, proof: given) }) {
            case .items(let items): return items
            case .needsPresence(let accessControl):
                guard proof == nil else { throw .interactionNotAllowed }
                proof = try presenceProof(for: accessControl, context: query.authentication ?? AuthenticationContext())
            }
        }
    }

    /// Hands each match to `body` as it is read (``Vault/forEachMatching(_:_:)``), for a
    /// query that returns no values.
    func forEachMatching(_ query: Query, _ body: (Item) throws(StoreError) -> Void) throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.forEachMatching(query, body) }
    }

    /// Whether an item matches, without decrypting any value.
    func contains(_ query: Query) throws(StoreError) -> Bool {
        try inUse { (state) throws(StoreError) in try state.contains(query) }
    }

    /// Applies `operations` in one transaction; says whether it journaled a change for sync.
    @discardableResult
    func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteOutcome {
        try inUse { (state) throws(StoreError) in try state.write(operations) }
    }
}
