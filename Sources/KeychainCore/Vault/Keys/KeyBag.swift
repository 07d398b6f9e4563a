/// The keys this process holds for one vault and its lock state: the key ring, when the vault
/// was last used (past the idle timeout a passphrase vault locks), and whether its
/// whenUnlocked keys came through the user's unlocked state rather than its own passphrase.
/// Holds no file and no lock: ``VaultState`` owns one, under the engine's lock.
struct KeyBag {
    var keys = KeyRing()
    /// When the vault was last used.
    private(set) var lastUse = ContinuousClock.now
    /// Whether this process holds whenUnlocked keys only through the user's unlocked state.
    private(set) var heldThroughUserUnlock = false
    /// The idle timeout the unlocking process chose for the user's unlocked state, which every
    /// use keeps (not the reader's own).
    private(set) var heldUnlockTimeout: UInt32 = 1
    private var userUnlockConfirmed = ContinuousClock.now
    /// Whether this process's last unlock asked to open whenUnlocked items to the user's other
    /// processes (``Vault/unlock(forUser:)``, `keychain unlock`): only then is the user's
    /// unlocked state published. A passphrase from a file, a credential or a prompt opens the
    /// vault for the process that read it.
    var publishesUserUnlock = false

    /// Records a use at `now`; true when the vault sat unused past `idleTimeout` first and its
    /// unlocked keys are to be locked (a vault without a passphrase has nothing to lock).
    mutating func use(at now: ContinuousClock.Instant, idleTimeout: Duration?, hasPassphrase: Bool) -> Bool {
        defer { lastUse = now }
        guard hasPassphrase, keys.master != nil, let idleTimeout else { return false }
        return now - lastUse >= idleTimeout
    }

    /// Whether the vault went unused for `timeout` by `now`.
    func isIdle(at now: ContinuousClock.Instant, for timeout: Duration) -> Bool {
        now - lastUse >= timeout
    }

    /// Adopts `master` and the lookup key derived from it. Class keys held from another master
    /// key are another rotation's: kept, they would be returned as they are instead of
    /// unwrapped anew, and seal rows no current key opens.
    mutating func adopt(master: SecretBytes, lookup: HMACKey) {
        if keys.master.map({ $0 != master }) ?? true { keys.classes.removeAll() }
        keys.master = master
        keys.lookup = lookup
        keys.ledger = nil
        keys.journal = nil
    }

    /// Whether keys held through the user's unlocked state are due to be checked against it at
    /// `now` (at most once a second); the check is then counted as made.
    mutating func userUnlockCheckDue(at now: ContinuousClock.Instant) -> Bool {
        guard heldThroughUserUnlock, keys.master == nil, now - userUnlockConfirmed >= .seconds(1) else { return false }
        userUnlockConfirmed = now
        return true
    }

    /// Records that the whenUnlocked keys now held came through the user's unlocked state,
    /// published with `timeout`.
    mutating func holdThroughUserUnlock(timeout: UInt32, at now: ContinuousClock.Instant) {
        heldThroughUserUnlock = true
        heldUnlockTimeout = timeout
        userUnlockConfirmed = now
    }

    /// The user's unlocked state ended (locked, timed out, or this process's keys retired):
    /// the keys held only through it go.
    mutating func userUnlockEnded() {
        if heldThroughUserUnlock { keys.classes = keys.classes.filter { !$0.key.opensWithUserUnlock } }
        heldThroughUserUnlock = false
    }
}
