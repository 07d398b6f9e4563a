internal import KeychainSystem
import Synchronization

/// An existing vault file, open: its state (``VaultState``: the connection, the header, the lock
/// state and its keys, the item ledger, the sync journal) behind one lock, and every operation a
/// closure over that state under it. ``Vault`` is the public face over it, and the only place a
/// vault file is created (``VaultState/create(_:)``); this type only ever opens files that exist,
/// after checking their owner, type, mode and schema.
///
/// Callers reach the state's operations through ``inUse(_:)`` (an operation that counts as a use
/// of the vault) and ``locked(_:)`` (locking, status: no use); what the engine adds of its own
/// is the work done outside the lock: the key derivations of an unlock, a passphrase change and
/// a rekey (of the current passphrase), and the proof of presence a read may ask for.
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
    private let state: VisibleMutex<VaultState>

    /// Opens the existing vault at the configuration's location.
    ///
    /// - Throws: as ``VaultState/init(_:)``.
    init(_ configuration: VaultConfiguration) throws(StoreError) {
        self.configuration = configuration
        let opened = try VaultState(configuration)
        vaultID = opened.header.vaultID
        state = VisibleMutex(opened)
        locked { $0.lockState.whenIdle { [weak self] in self?.lockIfIdle() } }
    }

    /// Runs `body` under the vault's lock as one use of the vault: a vault idle past its
    /// timeout locks first, and the user's lock state is followed (``VaultState/beginUse()``).
    func inUse<R>(_ body: (VaultState) throws(StoreError) -> sending R) throws(StoreError) -> sending R {
        try state.withLock { (state: inout sending VaultState) throws(StoreError) -> sending R in
            state.beginUse()
            return try body(state)
        }
    }

    /// Runs `body` under the vault's lock without beginning a use (``VaultState/beginUse()``):
    /// locking, status, a look at whether a class is available.
    func locked<R>(_ body: (VaultState) -> sending R) -> sending R {
        state.withLock { (state: inout sending VaultState) -> sending R in
            return body(state)
        }
    }

    /// The idle timer's look (``LockState/lockIfIdle(at:)``), under the vault's lock.
    private func lockIfIdle() {
        locked { $0.lockState.lockIfIdle(at: ContinuousClock.now) }
    }

    /// Unlocks a passphrase vault (``VaultState/finishUnlock(_:master:passphraseKey:forUser:)``)
    /// with the key derived outside the vault's lock, as ``presenceProof(for:context:)`` does, so
    /// that the other threads of the process are answered meanwhile: what scrypt needs is read
    /// under the lock, and the keys are adopted under it again if the header is still the one
    /// they opened. A vault without a passphrase is always unlocked and this does nothing.
    ///
    /// Another process may rotate the keys or change the passphrase between the two: the unlock
    /// starts again, as ``RotationRetry`` bounds it.
    func unlock(passphrase: SecretBytes, forUser: Bool) throws(StoreError) {
        for _ in 1..<RotationRetry.attempts {
            do throws(StoreError) {
                return try unlockOnce(passphrase: passphrase, forUser: forUser)
            } catch .locked {
                continue
            }
        }
        try unlockOnce(passphrase: passphrase, forUser: forUser)
    }

    /// One attempt at the unlock.
    private func unlockOnce(passphrase: SecretBytes, forUser: Bool) throws(StoreError) {
        guard let plan = try inUse({ (state) throws(StoreError) in try state.planUnlock() }) else { return }
        let (master, passphraseKey) = try VaultState.openMasterKey(passphrase: passphrase, header: plan.header)
        try inUse { (state) throws(StoreError) in try state.finishUnlock(plan, master: master, passphraseKey: passphraseKey, forUser: forUser) }
    }

    /// Sets, changes or removes the passphrase (``VaultState/changePassphrase(from:to:opened:)``),
    /// the current passphrase's key derived outside the vault's lock.
    func changePassphrase(from current: SecretBytes?, to new: SecretBytes?) throws(StoreError) {
        let opened = try openedOutsideTheLock(current)
        try inUse { (state) throws(StoreError) in try state.changePassphrase(from: current, to: new, opened: opened) }
    }

    /// Gives the vault new keys (``VaultState/rekey(passphrase:opened:)``), the current
    /// passphrase's key derived outside the vault's lock.
    func rekey(passphrase: SecretBytes) throws(StoreError) {
        let opened = try openedOutsideTheLock(passphrase)
        try inUse { (state) throws(StoreError) in try state.rekey(passphrase: passphrase, opened: opened) }
    }

    /// The master key `passphrase` opens in the header as it is now, derived outside the vault's
    /// lock; nil without a passphrase on either side. The operation it is handed to derives again
    /// under the lock if the header changed meanwhile.
    private func openedOutsideTheLock(_ passphrase: SecretBytes?) throws(StoreError) -> VaultState.OpenedMasterKey? {
        guard let passphrase else { return nil }
        let header = try inUse { (state) throws(StoreError) -> VaultHeader in
            try state.database.refreshHeader()
            return state.header
        }
        guard header.hasPassphrase else { return nil }
        let (master, passphraseKey) = try VaultState.openMasterKey(passphrase: passphrase, header: header)
        return VaultState.OpenedMasterKey(header: header, master: master, passphraseKey: passphraseKey)
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
}
