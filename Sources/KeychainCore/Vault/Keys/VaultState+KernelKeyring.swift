/// The kernel keyring: the afterFirstUnlock keys cached for the user's processes until
/// reboot, and the user's unlocked state (the whenUnlocked keys with an idle timeout).
extension VaultState {
    /// The user's unlocked state: the whenUnlocked class keys, in the kernel keyring with an
    /// idle timeout, for every process of the user (``VaultConfiguration/userUnlockTimeout``).
    var unlockedDescription: String { cacheDescription + ":unlocked" }

    var usesUserUnlock: Bool { configuration.usesKernelKeyring && configuration.userUnlockTimeout != nil && header.hasPassphrase }

    var userUnlockSeconds: UInt32 {
        guard let timeout = configuration.userUnlockTimeout else { return 0 }
        return UInt32(clamping: max(timeout.components.seconds, 1))
    }

    /// The user's unlocked state as stored: the idle timeout (4 bytes, big-endian), then the keys.
    static func unlockedPayload(timeout: UInt32, _ keys: SecretBytes) -> SecretBytes {
        SecretBytes(count: 4 + keys.count) { out in
            for index in 0..<4 { out[index] = UInt8(truncatingIfNeeded: timeout >> (24 - 8 * UInt32(index))) }
            keys.withUnsafeBytes { (out.baseAddress! + 4).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }

    static func splitUnlockedPayload(_ stored: SecretBytes) -> (UInt32, SecretBytes)? {
        stored.withUnsafeBytes { bytes in
            guard bytes.count > 4 else { return nil }
            let timeout = bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return (max(timeout, 1), SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[4...])))
        }
    }

    /// Follows the user's lock state for keys held through it: once `keychain lock` or the idle
    /// timeout ended it, they are dropped here too; while it lasts, each use (at most once a
    /// second) pushes its idle timeout back.
    func followUserUnlock() {
        let now = ContinuousClock.now
        if followsPublishedUnlock, keyBag.publishedUnlockCheckDue(at: now) {
            if let stored = kernelKeyring.load(unlockedDescription) {
                // The timeout of the user's latest unlock (`keychain unlock --timeout` since), not this process's.
                kernelKeyring.refresh(unlockedDescription, timeout: Self.splitUnlockedPayload(stored)?.0 ?? userUnlockSeconds)
            } else {
                lockKeys()
                keyBag.userUnlockEnded()
            }
            return
        }
        guard keyBag.userUnlockCheckDue(at: now) else { return }
        if kernelKeyring.load(unlockedDescription) == nil {
            keyBag.userUnlockEnded()
        } else {
            kernelKeyring.refresh(unlockedDescription, timeout: keyBag.heldUnlockTimeout)
        }
    }

    /// Drops the keys held through the user's unlocked state once it ended (a lock, its idle
    /// timeout), without pushing its timeout back: a look at the lock state is not a use.
    func noticeUserUnlockEnded() {
        if followsPublishedUnlock, keyBag.holdsPublishedUnlock {
            guard kernelKeyring.load(unlockedDescription) == nil else { return }
            lockKeys()
            keyBag.userUnlockEnded()
            return
        }
        guard keyBag.heldThroughUserUnlock, keyBag.keys.master == nil, kernelKeyring.load(unlockedDescription) == nil else { return }
        keyBag.userUnlockEnded()
    }

    /// Whether this process, having unlocked for the user with the passphrase, follows the
    /// user's unlocked state as a process that took it does: it has no idle lock of its own
    /// (`keychain serve`), so its uses are what keep the user's unlock alive, and its end (the
    /// idle lock) locks it too. Not where publishing failed: the unlock is then this process's.
    var followsPublishedUnlock: Bool {
        guard usesUserUnlock, configuration.idleTimeout == nil, case .available? = kernelKeyringState else { return false }
        return true
    }

    /// The user's lock stamp: random bytes replaced by every lock of the vault (`keychain lock`,
    /// `Service.Lock`, a suspend or a session lock), in the kernel keyring until reboot. A process
    /// that unlocked, by any means, before the stamp it read changed is locked at its next use:
    /// one lock reaches every process of the user at once.
    var lockStampDescription: String { cacheDescription + ":lock" }

    /// The user's lock stamp now; nil without one (no lock since boot) or without the kernel keyring.
    func currentLockStamp() -> [UInt8]? {
        guard configuration.usesKernelKeyring, header.hasPassphrase else { return nil }
        // A lock replaces the stamp's payload in place (the same key): once found, the key is
        // read by its number, one system call at each use instead of a search and a read.
        if let serial = keyBag.lockStampSerial, let stamp = kernelKeyring.read(serial: serial, limit: 64) { return stamp }
        let serial = kernelKeyring.serial(of: lockStampDescription)
        keyBag.saw(lockStampSerial: serial)
        return serial.flatMap { kernelKeyring.read(serial: $0, limit: 64) }
    }

    /// Marks a lock for every process of the user (best effort: without the kernel keyring the
    /// lock is this process's own, as its unlock was).
    func stampLock() {
        guard configuration.usesKernelKeyring, header.hasPassphrase else { return }
        try? kernelKeyring.store(SecretBytes.random(count: 16), as: lockStampDescription)
        // Again after the stamp: an unlock that published between the caller's removal and the
        // stamp read the old stamp after publishing, and would not withdraw.
        kernelKeyring.remove(unlockedDescription)
    }

    /// Locks this process when the user's vault was locked since it unlocked (another stamp).
    func followLockStamp() {
        guard configuration.usesKernelKeyring, header.hasPassphrase, keyBag.holdsUnlockedKeys else { return }
        guard currentLockStamp() != keyBag.lockStamp else { return }
        lockKeys()
        keyBag.userUnlockEnded()
    }

    var cacheDescription: String {
        "swift-keychain:v1:" + Digest.hex(header.vaultID)
    }

    func publishToKernelKeyring() { publishToKernelKeyring(forUser: keyBag.publishesUserUnlock) }

    /// Publishes the afterFirstUnlock keys, and with `forUser` the whenUnlocked ones as the
    /// user's unlocked state, to the kernel keyring.
    func publishToKernelKeyring(forUser: Bool) {
        // The check values also mark a rotation for other processes: recorded with or without a
        // cache; keys a rotation retired are not published.
        guard recordKeyChecks() else { return }
        guard header.hasPassphrase, configuration.usesKernelKeyring, let payload = keyBag.keys.cachePayload() else { return }
        do {
            try kernelKeyring.store(payload, as: cacheDescription)
            if usesUserUnlock, forUser, let unlocked = keyBag.keys.cachePayload(of: { $0.opensWithUserUnlock }) {
                try kernelKeyring.store(Self.unlockedPayload(timeout: userUnlockSeconds, unlocked), as: unlockedDescription, timeout: userUnlockSeconds)
            }
            kernelKeyringState = .available
        } catch {
            // Fall back to this process only (the keys stay in `keys`), and say so in status().
            kernelKeyringState = .unavailable(reason: error.description)
        }
    }

    func currentKernelKeyringState() -> VaultStatus.KernelKeyringState {
        guard configuration.usesKernelKeyring else { return .disabled }
        if let kernelKeyringState { return kernelKeyringState }
        let state: VaultStatus.KernelKeyringState
        switch kernelKeyring.probe() {
        case .success: state = .available
        case .failure(let error): state = .unavailable(reason: error.description)
        }
        kernelKeyringState = state
        return state
    }

    /// Whether the kernel keyring holds the user's unlocked state with this vault's current
    /// whenUnlocked keys (their check values as recorded), not merely a key of that name.
    func holdsGenuineUserUnlock() -> Bool {
        guard let stored = kernelKeyring.load(unlockedDescription), let (_, payload) = Self.splitUnlockedPayload(stored) else { return false }
        var candidate = KeyRing()
        guard candidate.adopt(cachePayload: payload, allowed: { $0.opensWithUserUnlock }), !candidate.classes.isEmpty,
            let bytes = try? storedKeyChecks(), let checks = KeyCheck.decode(bytes)
        else { return false }
        return KeyCheck.verify(candidate, against: checks, vaultID: header.vaultID)
    }
}
