/// The lock state of one open vault in this process, and the one place that decides it: the
/// keys held (and so which classes are open), the idle lock (its deadline, which each use pushes
/// back, and the timer that locks at it), and the user's lock state as this process follows it
/// (the lock stamp it unlocked under, the user's unlocked state it took or published, and how
/// often it looks at them).
///
/// Holds no file and no lock: ``VaultState`` owns one, under the engine's lock, and asks it.
/// What the kernel keyring says is read through a ``UserLockRecord`` the vault hands in; every
/// key this state drops, it drops in ``lock(_:)``.
struct LockState {
    /// What the vault's configuration says of locking; fixed for the life of the open vault.
    struct Policy {
        /// A passphrase vault unused this long locks in this process; nil: only when asked to.
        var idleTimeout: Duration?
        /// The timeout of the user's unlocked state, in whole seconds (at least one); nil where
        /// there is none (no kernel keyring, or no ``VaultConfiguration/userUnlockTimeout``).
        var userUnlockSeconds: UInt32?
        /// Whether the vault shares its lock state with the user's other processes.
        var usesKernelKeyring: Bool

        init(_ configuration: VaultConfiguration) {
            idleTimeout = configuration.idleTimeout
            usesKernelKeyring = configuration.usesKernelKeyring
            userUnlockSeconds =
                if configuration.usesKernelKeyring, let timeout = configuration.userUnlockTimeout {
                    UInt32(clamping: max(timeout.components.seconds, 1))
                } else {
                    nil
                }
        }

        init(idleTimeout: Duration?, userUnlockSeconds: UInt32?, usesKernelKeyring: Bool) {
            self.idleTimeout = idleTimeout
            self.userUnlockSeconds = userUnlockSeconds
            self.usesKernelKeyring = usesKernelKeyring
        }
    }

    /// How much a lock drops.
    enum Extent {
        /// The master key and the class keys that do not survive a lock (``KeyRing/lock()``).
        case unlockedKeys
        /// Every key, the lookup key too: as after a reboot, or a rotation by another process.
        case everyKey
    }

    /// How often the user's unlocked state is looked at, and its timeout pushed back.
    static let userUnlockInterval = Duration.seconds(1)

    let policy: Policy
    /// The keys held; changed only here.
    private(set) var keys = KeyRing()
    /// When the vault was last used: the idle lock falls due `idleTimeout` later.
    private var lastUse: ContinuousClock.Instant
    /// Runs while a passphrase vault with an idle timeout is unlocked; let go, it stops.
    private var idleTimer: IdleTimer?
    /// What the idle timer calls: the engine, which takes its lock and calls ``lockIfIdle(at:)``.
    private var onIdle: (@Sendable () -> Void)?
    /// Whether this process holds whenUnlocked keys only through the user's unlocked state.
    private(set) var heldThroughUserUnlock = false
    /// The idle timeout the unlocking process chose for the user's unlocked state, which every
    /// use keeps (not the reader's own).
    private(set) var heldUnlockTimeout: UInt32 = 1
    /// Whether this process's last unlock asked to open whenUnlocked items to the user's other
    /// processes (``Vault/unlock(forUser:)``, `keychain unlock`): only then is the user's
    /// unlocked state published. A passphrase from a file, a credential or a prompt opens the
    /// vault for the process that read it.
    private(set) var publishesUserUnlock = false
    /// When the user's unlocked state was last pushed back by a use.
    private var userUnlockPushedBack: ContinuousClock.Instant
    /// When the user's unlocked state was last looked at, by a use or a mere look.
    private var userUnlockLooked: ContinuousClock.Instant
    /// The user's lock stamp as it was when this process last unlocked or took the user's
    /// unlocked state: another stamp means a lock since.
    private(set) var lockStamp: [UInt8]?
    /// Where the record keeps the lock stamp, once found (``UserLockRecord/lockStamp(serial:)``).
    private(set) var lockStampSerial: Int32?
    /// The kernel keyring as this process last found it (nil: not tried yet).
    private(set) var kernelKeyring: VaultStatus.KernelKeyringState?
    /// How often this process was locked when asked (``lock()``, ``forget()``): an unlock whose
    /// key derived outside the vault's lock while this changed was locked meanwhile.
    private(set) var locks: UInt64 = 0

    init(_ policy: Policy, now: ContinuousClock.Instant = .now) {
        self.policy = policy
        lastUse = now
        userUnlockPushedBack = now
        userUnlockLooked = now
    }

    // MARK: - What is locked

    /// Whether the vault counts as unlocked here: the master key, or the whenUnlocked class key,
    /// is held.
    var isUnlocked: Bool { keys.master != nil || keys.classes[.whenUnlocked] != nil }

    /// Whether the class key of `accessibility` is held.
    func holds(_ accessibility: Accessibility) -> Bool { keys.classes[accessibility] != nil }

    /// Whether this process holds keys a lock drops (the master key, whenUnlocked class keys).
    var holdsUnlockedKeys: Bool { keys.master != nil || keys.classes.keys.contains(where: \.opensWithUserUnlock) }

    /// Whether this process unlocked for the user (``publishesUserUnlock``) and still holds the
    /// master key it unlocked with.
    var holdsPublishedUnlock: Bool { publishesUserUnlock && keys.master != nil }

    /// Whether this process, having unlocked for the user with the passphrase, follows the
    /// user's unlocked state as a process that took it does: it has no idle lock of its own
    /// (`keychain serve`), so its uses are what keep the user's unlock alive, and its end locks
    /// it too. Not where publishing failed: the unlock is then this process's.
    func followsPublishedUnlock(hasPassphrase: Bool) -> Bool {
        guard hasPassphrase, policy.userUnlockSeconds != nil, policy.idleTimeout == nil, case .available? = kernelKeyring else { return false }
        return true
    }

    /// The only place keys are dropped for a lock: the idle timer stops with them.
    private mutating func lock(_ extent: Extent) {
        idleTimer = nil
        switch extent {
        case .unlockedKeys: keys.lock()
        case .everyKey: keys.wipeAll()
        }
    }

    // MARK: - Unlocking

    /// Records what an unlock with the passphrase read first: the user's lock stamp before the
    /// keys opened (a lock after that read still locks this unlock), and whether it opens
    /// whenUnlocked items to the user's other processes.
    mutating func unlocking(forUser: Bool, stamp: [UInt8]?) {
        lockStamp = stamp
        publishesUserUnlock = forUser
    }

    /// Adopts `master` and the lookup key derived from it. Class keys held from another master
    /// key are another rotation's: kept, they would be returned as they are instead of
    /// unwrapped anew, and seal rows no current key opens.
    mutating func adopt(master: SecretBytes, lookup: HMACKey) { keys.adopt(master: master, lookup: lookup) }

    /// Holds `key` as the class key of `accessibility`, or drops it (nil: the class is gone,
    /// as the passcode class is with the passphrase).
    mutating func hold(_ key: SealingKey?, for accessibility: Accessibility) { keys.hold(key, for: accessibility) }

    /// Holds the keys derived from the lookup key, once derived (``VaultState/ledgerKey()``,
    /// ``VaultState/journalKey()``): they go with it.
    mutating func hold(ledgerKey: HMACKey) { keys.hold(ledgerKey: ledgerKey) }
    mutating func hold(journalKey: SealingKey) { keys.hold(journalKey: journalKey) }

    /// Takes the lookup key and the class keys of `candidate` (a checked kernel-keyring
    /// payload) that this state lacks; class keys already held stay.
    mutating func adoptMissing(from candidate: KeyRing) { keys.adoptMissing(from: candidate) }

    /// Holds `ring` in place of every key held: a rotation's fresh start, or the keys held
    /// before a rotation that failed.
    mutating func replaceKeys(with ring: KeyRing) { keys = ring }

    /// Records that the whenUnlocked keys now held came through the user's unlocked state,
    /// published with `timeout`, read after the lock stamp `stamp`.
    mutating func tookUserUnlock(timeout: UInt32, stamp: [UInt8]?, at now: ContinuousClock.Instant) {
        lockStamp = stamp
        heldThroughUserUnlock = true
        heldUnlockTimeout = timeout
        userUnlockPushedBack = now
        userUnlockLooked = now
    }

    /// Records how the kernel keyring answered this process (a publication, a probe).
    mutating func found(kernelKeyring state: VaultStatus.KernelKeyringState) { kernelKeyring = state }

    // MARK: - Locking

    /// Locks in this process: the master key and the whenUnlocked class keys go; the
    /// afterFirstUnlock keys and the lookup key stay, as on iOS.
    mutating func lock() {
        locks &+= 1
        lock(.unlockedKeys)
    }

    /// Locks and drops every key, the afterFirstUnlock keys and the lookup key too.
    mutating func forget() {
        locks &+= 1
        lock(.everyKey)
    }

    /// Another process rotated the keys: every key held is retired, the ones held through the
    /// user's unlocked state too.
    mutating func keysRetired() {
        lock(.everyKey)
        heldThroughUserUnlock = false
    }

    // MARK: - The idle lock

    /// When the idle lock falls due; nil without an idle timeout.
    var idleDeadline: ContinuousClock.Instant? { policy.idleTimeout.map { lastUse + $0 } }

    /// Sets what the idle timer calls (the engine, which takes its lock first).
    mutating func whenIdle(_ handler: @escaping @Sendable () -> Void) { onIdle = handler }

    /// Starts the idle timer of a passphrase vault just unlocked: it looks four times per
    /// timeout (``lockIfIdle(at:)``). Without a passphrase there is nothing to lock.
    mutating func startIdleTimer(hasPassphrase: Bool) {
        guard let timeout = policy.idleTimeout, hasPassphrase, let onIdle else { return }
        idleTimer = IdleTimer(every: max(timeout / 4, .milliseconds(10)), onIdle)
    }

    /// The idle timer's look: locks when the vault went unused up to its deadline.
    mutating func lockIfIdle(at now: ContinuousClock.Instant) {
        if let deadline = idleDeadline, now >= deadline { lock(.unlockedKeys) }
    }

    /// Records a use at `now`, locking first if the vault sat unused past its deadline (a vault
    /// without a passphrase has nothing to lock).
    mutating func use(at now: ContinuousClock.Instant, hasPassphrase: Bool) {
        defer { lastUse = now }
        guard hasPassphrase, keys.master != nil, let deadline = idleDeadline, now >= deadline else { return }
        lock(.unlockedKeys)
    }

    // MARK: - The user's lock state

    /// The user's lock stamp now, from `record`; nil without one or without the kernel keyring.
    mutating func currentLockStamp(in record: some UserLockRecord, hasPassphrase: Bool) -> [UInt8]? {
        guard policy.usesKernelKeyring, hasPassphrase else { return nil }
        return record.lockStamp(serial: &lockStampSerial)
    }

    /// Locks this process when the user's vault was locked since it unlocked (another stamp):
    /// looked at on every use and every look, so that one lock reaches every process at once.
    mutating func followLockStamp(in record: some UserLockRecord, hasPassphrase: Bool) {
        guard policy.usesKernelKeyring, hasPassphrase, holdsUnlockedKeys else { return }
        guard currentLockStamp(in: record, hasPassphrase: hasPassphrase) != lockStamp else { return }
        lock(.unlockedKeys)
        userUnlockEnded()
    }

    /// Follows the user's unlocked state for the keys held through it, or the master key of a
    /// process that published it and has no idle lock of its own: once `keychain lock` or the
    /// idle timeout ended it, they go here too. At most once a second (``userUnlockInterval``),
    /// a use (`asUse`) pushes its timeout back, and a look (a client asking whether the vault is
    /// locked) only checks that it lasts. A lock reaches this process through the stamp first
    /// (``followLockStamp(in:hasPassphrase:)``), which is never put off.
    mutating func followUserUnlock(in record: some UserLockRecord, at now: ContinuousClock.Instant, hasPassphrase: Bool, asUse: Bool) {
        let published: Bool
        let seconds: UInt32
        if followsPublishedUnlock(hasPassphrase: hasPassphrase), holdsPublishedUnlock, let own = policy.userUnlockSeconds {
            (published, seconds) = (true, own)
        } else if heldThroughUserUnlock, keys.master == nil {
            (published, seconds) = (false, heldUnlockTimeout)
        } else {
            return
        }
        guard now - (asUse ? userUnlockPushedBack : userUnlockLooked) >= Self.userUnlockInterval else { return }
        userUnlockLooked = now
        if asUse { userUnlockPushedBack = now }
        guard record.userUnlockLasts() else {
            if published { lock(.unlockedKeys) }
            userUnlockEnded()
            return
        }
        if asUse { record.pushBackUserUnlock(seconds: seconds) }
    }

    /// The user's unlocked state ended (locked, timed out): the keys held only through it go.
    private mutating func userUnlockEnded() {
        if heldThroughUserUnlock { keys.dropClasses { $0.opensWithUserUnlock } }
        heldThroughUserUnlock = false
    }
}

/// Where the user's lock state is kept for every process of the user (the kernel keyring), as a
/// ``LockState`` reads it.
protocol UserLockRecord {
    /// The user's lock stamp now (nil: none since boot). `serial` is where it was last found,
    /// kept current by the record: a lock replaces the stamp in place.
    func lockStamp(serial: inout Int32?) -> [UInt8]?
    /// Whether the user's unlocked state is still there.
    func userUnlockLasts() -> Bool
    /// Pushes the user's unlocked state's timeout back: by the timeout its latest unlock chose
    /// where the record keeps one, else by `seconds`.
    func pushBackUserUnlock(seconds: UInt32)
}
