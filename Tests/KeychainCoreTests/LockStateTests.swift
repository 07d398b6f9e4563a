import Testing

@testable import KeychainCore

/// The lock state on its own, without a vault file or a kernel keyring: what a lock, an idle
/// timeout, a new master key, the user's lock stamp and the end of the user's unlocked state
/// leave held, and how often it looks at the user's lock state.
@Suite("The lock state: what locking, idling, the user's lock and a new master key leave held")
struct LockStateTests {
    /// The user's lock state as a table, counting how often it is read and pushed back.
    final class UserLock: UserLockRecord {
        var stamp: [UInt8]? = [1]
        var lasts = true
        var stampReads = 0
        var looks = 0
        var pushedBack: [UInt32] = []

        func lockStamp(serial: inout Int32?) -> [UInt8]? {
            stampReads += 1
            serial = 7
            return stamp
        }

        func userUnlockLasts() -> Bool {
            looks += 1
            return lasts
        }

        func pushBackUserUnlock(seconds: UInt32) { pushedBack.append(seconds) }
    }

    static func key(_ byte: UInt8) -> SecretBytes { SecretBytes([UInt8](repeating: byte, count: 32)) }

    static let shared = LockState.Policy(idleTimeout: nil, userUnlockSeconds: 300, usesKernelKeyring: true)

    static func unlocked(_ policy: LockState.Policy = shared, master: UInt8 = 1, at now: ContinuousClock.Instant = .now) -> LockState {
        var state = LockState(policy, now: now)
        state.adopt(master: key(master), lookup: HMACKey(key(master &+ 100)))
        state.hold(SealingKey(key(10)), for: .whenUnlocked)
        state.hold(SealingKey(key(11)), for: .afterFirstUnlock)
        return state
    }

    /// A process holding only what the user's unlocked state gave it (a reader such as `keychain get`).
    static func tookUserUnlock(_ record: UserLock, at start: ContinuousClock.Instant) -> LockState {
        var ring = KeyRing()
        ring.lookup = HMACKey(key(100))
        ring.hold(SealingKey(key(11)), for: .afterFirstUnlock)
        ring.hold(SealingKey(key(10)), for: .whenUnlocked)
        var state = LockState(shared, now: start)
        state.replaceKeys(with: ring)
        state.tookUserUnlock(timeout: 120, stamp: record.stamp, at: start)
        return state
    }

    /// A process that unlocked for the user with the passphrase and has no idle lock of its own (`keychain serve`).
    static func publishedUnlock(_ record: UserLock, at start: ContinuousClock.Instant) -> LockState {
        var state = unlocked(at: start)
        state.unlocking(forUser: true, stamp: record.stamp)
        state.found(kernelKeyring: .available)
        return state
    }

    @Test("a new master key drops the class keys of the old one; the same master key keeps them")
    func anotherMasterDropsItsClassKeys() {
        var state = Self.unlocked(master: 1)
        state.adopt(master: Self.key(1), lookup: HMACKey(Self.key(101)))
        #expect(state.keys.classes.count == 2, "the same master key: its class keys stay")
        state.hold(ledgerKey: HMACKey(Self.key(50)))
        state.adopt(master: Self.key(2), lookup: HMACKey(Self.key(102)))
        #expect(state.keys.classes.isEmpty, "class keys unwrapped under a retired master key must not seal under the new one")
        #expect(state.keys.ledger == nil && state.keys.journal == nil, "keys derived from the old lookup key go with it")
        #expect(state.keys.master == Self.key(2))
    }

    @Test("locking keeps the afterFirstUnlock keys and the lookup key, and drops the master and whenUnlocked keys; forgetting drops every key")
    func lockKeepsWhatSurvivesALock() {
        var state = Self.unlocked()
        #expect(state.isUnlocked && state.holdsUnlockedKeys)
        state.lock()
        #expect(state.keys.master == nil && !state.holds(.whenUnlocked))
        #expect(state.holds(.afterFirstUnlock) && state.keys.lookup != nil)
        #expect(!state.isUnlocked && !state.holdsUnlockedKeys)
        state.forget()
        #expect(state.keys.lookup == nil && !state.holds(.afterFirstUnlock), "as after a reboot")
    }

    @Test("a use past the idle deadline locks a passphrase vault, never a key-file vault, and counts as a use")
    func idleDeadlineLocksOnlyAPassphraseVault() {
        let start = ContinuousClock.now
        var state = Self.unlocked(LockState.Policy(idleTimeout: .seconds(60), userUnlockSeconds: nil, usesKernelKeyring: false), at: start)
        #expect(state.idleDeadline == start + .seconds(60))
        state.use(at: start + .seconds(59), hasPassphrase: true)
        #expect(state.isUnlocked, "within the timeout")
        #expect(state.idleDeadline == start + .seconds(119), "a use pushes the deadline back")
        var keyFile = state
        keyFile.use(at: start + .seconds(300), hasPassphrase: false)
        #expect(keyFile.keys.master != nil, "a key-file vault has nothing to lock")
        state.use(at: start + .seconds(120), hasPassphrase: true)
        #expect(!state.isUnlocked && state.holds(.afterFirstUnlock), "unused past the deadline: locked before the use")
        #expect(state.idleDeadline == start + .seconds(180), "the use that found it locked counts")

        var noTimeout = Self.unlocked(Self.shared, at: start)
        noTimeout.use(at: start + .seconds(86_400), hasPassphrase: true)
        noTimeout.lockIfIdle(at: start + .seconds(86_400))
        #expect(noTimeout.isUnlocked && noTimeout.idleDeadline == nil, "no idle timeout configured: no idle lock")
    }

    @Test("the idle timer's look locks at the deadline and not before")
    func idleTimerLocksAtTheDeadline() {
        let start = ContinuousClock.now
        var state = Self.unlocked(LockState.Policy(idleTimeout: .seconds(10), userUnlockSeconds: nil, usesKernelKeyring: false), at: start)
        state.lockIfIdle(at: start + .seconds(9))
        #expect(state.isUnlocked)
        state.lockIfIdle(at: start + .seconds(10))
        #expect(!state.isUnlocked)
    }

    @Test("another lock stamp locks at once, at every use and every look, however recently the user's unlock was looked at")
    func lockStampIsNeverPutOff() {
        let record = UserLock()
        let start = ContinuousClock.now
        var served = Self.publishedUnlock(record, at: start)
        var reader = Self.tookUserUnlock(record, at: start)
        // Looked at just now: the user's unlocked state is not read again for a second.
        served.followUserUnlock(in: record, at: start + .seconds(2), hasPassphrase: true, asUse: false)
        reader.followUserUnlock(in: record, at: start + .seconds(2), hasPassphrase: true, asUse: true)
        served.followLockStamp(in: record, hasPassphrase: true)
        #expect(served.isUnlocked, "the same stamp: no lock since")
        record.stamp = [2]
        let reads = record.stampReads
        served.followLockStamp(in: record, hasPassphrase: true)
        reader.followLockStamp(in: record, hasPassphrase: true)
        #expect(record.stampReads == reads + 2, "the stamp is read at each look")
        #expect(!served.isUnlocked && served.keys.master == nil, "keychain lock reached the serve at once")
        #expect(!reader.holds(.whenUnlocked) && !reader.heldThroughUserUnlock, "and the reader")
        #expect(reader.holds(.afterFirstUnlock), "afterFirstUnlock keys survive a lock")
        #expect(served.lockStampSerial == 7, "the stamp's key is remembered by its number")
    }

    @Test("without the kernel keyring or a passphrase there is no stamp to follow: the lock is the process's own")
    func noStampWithoutTheKernelKeyring() {
        let record = UserLock()
        var state = Self.unlocked(LockState.Policy(idleTimeout: nil, userUnlockSeconds: nil, usesKernelKeyring: false))
        state.unlocking(forUser: false, stamp: nil)
        record.stamp = [9]
        state.followLockStamp(in: record, hasPassphrase: true)
        #expect(state.isUnlocked && record.stampReads == 0)
        #expect(state.currentLockStamp(in: record, hasPassphrase: true) == nil)
    }

    @Test("keys taken from the user's unlocked state are looked at once a second; when it ends, only they go")
    func userUnlockEndingDropsOnlyItsKeys() {
        let record = UserLock()
        let start = ContinuousClock.now
        var state = Self.tookUserUnlock(record, at: start)
        state.followUserUnlock(in: record, at: start + .milliseconds(500), hasPassphrase: true, asUse: true)
        #expect(record.looks == 0, "looked at most once a second")
        state.followUserUnlock(in: record, at: start + .seconds(2), hasPassphrase: true, asUse: true)
        #expect(record.looks == 1 && record.pushedBack == [120], "a use keeps the unlocking process's timeout")
        record.lasts = false
        state.followUserUnlock(in: record, at: start + .seconds(4), hasPassphrase: true, asUse: false)
        #expect(!state.holds(.whenUnlocked) && state.holds(.afterFirstUnlock))
        #expect(!state.heldThroughUserUnlock)
        state.followUserUnlock(in: record, at: start + .seconds(10), hasPassphrase: true, asUse: true)
        #expect(record.looks == 2, "nothing held through it any more: not looked at again")
    }

    @Test("a serve that unlocked for the user reads the user's unlocked state at most once a second however often clients look")
    func looksAtThePublishedUnlockAreThrottled() {
        let record = UserLock()
        let start = ContinuousClock.now
        var state = Self.publishedUnlock(record, at: start)
        #expect(state.followsPublishedUnlock(hasPassphrase: true))
        for step in 0..<1000 {
            state.followUserUnlock(in: record, at: start + .seconds(1) + .microseconds(step * 900), hasPassphrase: true, asUse: false)
        }
        #expect(record.looks == 1, "a thousand looks within a second: one kernel keyring read")
        #expect(record.pushedBack.isEmpty, "a look is not a use: the timeout is not pushed back")
        // A use right after a look still pushes the timeout back: looks do not use up the uses' turn.
        state.followUserUnlock(in: record, at: start + .milliseconds(1950), hasPassphrase: true, asUse: true)
        #expect(record.pushedBack == [300], "the serve's own timeout")
        record.lasts = false
        state.followUserUnlock(in: record, at: start + .milliseconds(2500), hasPassphrase: true, asUse: false)
        #expect(state.isUnlocked, "not looked at again within the second")
        state.followUserUnlock(in: record, at: start + .seconds(3), hasPassphrase: true, asUse: false)
        #expect(!state.isUnlocked && state.keys.master == nil, "the user's unlock ended: the process that made it locks too")
        #expect(state.holds(.afterFirstUnlock))
    }

    @Test("only a process with no idle lock, a passphrase, the user's unlock and a working kernel keyring follows what it published")
    func whoFollowsThePublishedUnlock() {
        let record = UserLock()
        var state = Self.publishedUnlock(record, at: .now)
        #expect(state.followsPublishedUnlock(hasPassphrase: true))
        #expect(!state.followsPublishedUnlock(hasPassphrase: false))
        state.found(kernelKeyring: .unavailable(reason: "refused"))
        #expect(!state.followsPublishedUnlock(hasPassphrase: true), "publishing failed: the unlock is this process's own")
        var idle = LockState(LockState.Policy(idleTimeout: .seconds(300), userUnlockSeconds: 300, usesKernelKeyring: true))
        idle.found(kernelKeyring: .available)
        #expect(!idle.followsPublishedUnlock(hasPassphrase: true), "a process with its own idle lock keeps it")
        var own = Self.unlocked()
        own.unlocking(forUser: false, stamp: nil)
        own.found(kernelKeyring: .available)
        #expect(own.followsPublishedUnlock(hasPassphrase: true) && !own.holdsPublishedUnlock, "an unlock for itself publishes nothing to follow")
    }

    @Test("keys retired by another process's rotation all go, and the user's unlocked state is no longer followed")
    func retiredKeysAllGo() {
        let record = UserLock()
        let start = ContinuousClock.now
        var state = Self.tookUserUnlock(record, at: start)
        state.keysRetired()
        #expect(state.keys.lookup == nil && state.keys.classes.isEmpty && !state.heldThroughUserUnlock)
        state.followUserUnlock(in: record, at: start + .seconds(5), hasPassphrase: true, asUse: true)
        #expect(record.looks == 0)
    }
}
