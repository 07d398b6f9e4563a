/// The keys this process holds for one vault and its lock state: the key ring, when the vault
/// was last used (past the idle timeout a passphrase vault locks), and whether its
/// whenUnlocked keys came through the user's unlocked state rather than its own passphrase.
/// Holds no file and no lock: ``VaultState`` owns one, under the engine's lock.
struct KeyBag {
    /// The keys held; changed only through this bag's methods.
    private(set) var keys = KeyRing()
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
    private(set) var publishesUserUnlock = false
    /// The user's lock stamp (``VaultState/lockStampDescription``) as it was when this process
    /// last unlocked or took the user's unlocked state: another stamp means a lock since.
    private(set) var lockStamp: [UInt8]?
    /// The kernel keyring's number for the lock stamp's key, once found.
    private(set) var lockStampSerial: Int32?

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
        keys.adopt(master: master, lookup: lookup)
    }

    /// Holds `key` as the class key of `accessibility`, or drops it (nil).
    mutating func hold(_ key: SealingKey?, for accessibility: Accessibility) { keys.hold(key, for: accessibility) }

    /// Holds the keys derived from the lookup key, once derived (``VaultState/ledgerKey()``,
    /// ``VaultState/journalKey()``).
    mutating func hold(ledgerKey: HMACKey) { keys.hold(ledgerKey: ledgerKey) }
    mutating func hold(journalKey: SealingKey) { keys.hold(journalKey: journalKey) }

    /// Holds `ring` in place of every key held: a rotation's fresh start, or the keys held
    /// before a rotation that failed.
    mutating func replaceKeys(with ring: KeyRing) { keys = ring }

    /// Takes the lookup key and the class keys of `candidate` (a checked kernel-keyring
    /// payload) that this bag lacks; class keys already held stay.
    mutating func adoptMissing(from candidate: KeyRing) { keys.adoptMissing(from: candidate) }

    /// Drops what `lock()` drops (``KeyRing/lock()``).
    mutating func lock() { keys.lock() }

    /// Drops every key, the lookup key too.
    mutating func wipeAll() { keys.wipeAll() }

    /// Records the user's lock stamp as read before an unlock or an adoption of the user's
    /// unlocked state: a lock after that read changes it, and locks this process.
    mutating func saw(lockStamp stamp: [UInt8]?) { lockStamp = stamp }

    /// Records the number of the lock stamp's key (nil: there is none to read).
    mutating func saw(lockStampSerial serial: Int32?) { lockStampSerial = serial }

    /// Whether this process holds keys a lock drops (the master key, whenUnlocked class keys).
    var holdsUnlockedKeys: Bool { keys.master != nil || keys.classes.keys.contains(where: \.opensWithUserUnlock) }

    /// Records whether the unlock under way opens whenUnlocked items to the user's other processes.
    mutating func unlocking(forUser: Bool) { publishesUserUnlock = forUser }

    /// Whether keys held through the user's unlocked state are due to be checked against it at
    /// `now` (at most once a second); the check is then counted as made.
    mutating func userUnlockCheckDue(at now: ContinuousClock.Instant) -> Bool {
        guard heldThroughUserUnlock, keys.master == nil, now - userUnlockConfirmed >= .seconds(1) else { return false }
        userUnlockConfirmed = now
        return true
    }

    /// Whether the user's unlocked state this process published, holding the master key, is due
    /// to be checked at `now` (at most once a second); the check is then counted as made.
    mutating func publishedUnlockCheckDue(at now: ContinuousClock.Instant) -> Bool {
        guard holdsPublishedUnlock, now - userUnlockConfirmed >= .seconds(1) else { return false }
        userUnlockConfirmed = now
        return true
    }

    /// Whether this process unlocked for the user (``publishesUserUnlock``) and still holds the
    /// master key it unlocked with.
    var holdsPublishedUnlock: Bool { publishesUserUnlock && keys.master != nil }

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
        if heldThroughUserUnlock { keys.dropClasses { $0.opensWithUserUnlock } }
        heldThroughUserUnlock = false
    }
}
