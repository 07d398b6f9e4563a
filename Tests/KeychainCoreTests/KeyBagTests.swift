import Testing

@testable import KeychainCore

/// The key bag on its own, without a vault file: what a lock, an idle timeout, a new master
/// key and the end of the user's unlocked state leave in it.
@Suite("The key bag: what locking, idling and a new master key leave held")
struct KeyBagTests {
    static func key(_ byte: UInt8) -> SecretBytes { SecretBytes([UInt8](repeating: byte, count: 32)) }

    static func unlocked(master: UInt8 = 1) -> KeyBag {
        var bag = KeyBag()
        bag.adopt(master: key(master), lookup: HMACKey(key(master &+ 100)))
        bag.hold(SealingKey(key(10)), for: .whenUnlocked)
        bag.hold(SealingKey(key(11)), for: .afterFirstUnlock)
        return bag
    }

    @Test("a new master key drops the class keys of the old one; the same master key keeps them")
    func anotherMasterDropsItsClassKeys() {
        var bag = Self.unlocked(master: 1)
        bag.adopt(master: Self.key(1), lookup: HMACKey(Self.key(101)))
        #expect(bag.keys.classes.count == 2, "the same master key: its class keys stay")
        bag.hold(ledgerKey: HMACKey(Self.key(50)))
        bag.adopt(master: Self.key(2), lookup: HMACKey(Self.key(102)))
        #expect(bag.keys.classes.isEmpty, "class keys unwrapped under a retired master key must not seal under the new one")
        #expect(bag.keys.ledger == nil && bag.keys.journal == nil, "keys derived from the old lookup key go with it")
        #expect(bag.keys.master == Self.key(2))
    }

    @Test("locking keeps the afterFirstUnlock keys and the lookup key, and drops the master and whenUnlocked keys")
    func lockKeepsWhatSurvivesALock() {
        var bag = Self.unlocked()
        bag.lock()
        #expect(bag.keys.master == nil)
        #expect(bag.keys.classes[.whenUnlocked] == nil)
        #expect(bag.keys.classes[.afterFirstUnlock] != nil && bag.keys.lookup != nil)
    }

    @Test("a use after the idle timeout asks a passphrase vault to lock, never a key-file vault, and counts as a use")
    func idleTimeoutLocksOnlyAPassphraseVault() {
        var bag = Self.unlocked()
        let start = ContinuousClock.now
        let first = bag.use(at: start, idleTimeout: .seconds(60), hasPassphrase: true)
        let within = bag.use(at: start + .seconds(59), idleTimeout: .seconds(60), hasPassphrase: true)
        let past = bag.use(at: start + .seconds(120), idleTimeout: .seconds(60), hasPassphrase: true)
        let keyFile = bag.use(at: start + .seconds(300), idleTimeout: .seconds(60), hasPassphrase: false)
        let noTimeout = bag.use(at: start + .seconds(400), idleTimeout: nil, hasPassphrase: true)
        #expect(!first && !within, "within the timeout")
        #expect(past, "unused past the timeout")
        #expect(!keyFile, "a key-file vault has nothing to lock")
        #expect(!noTimeout, "no idle timeout configured")
        #expect(!bag.isIdle(at: start + .seconds(401), for: .seconds(60)), "the last use counts")
    }

    @Test("when the user's unlocked state ends, only the keys held through it go")
    func userUnlockEndingDropsOnlyItsKeys() {
        var ring = KeyRing()
        ring.lookup = HMACKey(Self.key(100))
        ring.hold(SealingKey(Self.key(11)), for: .afterFirstUnlock)
        ring.hold(SealingKey(Self.key(10)), for: .whenUnlocked)
        var bag = KeyBag()
        bag.replaceKeys(with: ring)
        let start = ContinuousClock.now
        bag.holdThroughUserUnlock(timeout: 300, at: start)
        let early = bag.userUnlockCheckDue(at: start + .milliseconds(500))
        let due = bag.userUnlockCheckDue(at: start + .seconds(2))
        #expect(!early, "checked at most once a second")
        #expect(due)
        bag.userUnlockEnded()
        let afterEnd = bag.userUnlockCheckDue(at: start + .seconds(10))
        #expect(bag.keys.classes[.whenUnlocked] == nil && bag.keys.classes[.afterFirstUnlock] != nil)
        #expect(!bag.heldThroughUserUnlock && !afterEnd)
    }
}
