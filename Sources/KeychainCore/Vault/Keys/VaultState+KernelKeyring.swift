/// The kernel keyring: the afterFirstUnlock keys cached for the user's processes until
/// reboot, and the user's unlocked state (the whenUnlocked keys with an idle timeout).
extension VaultState {
    /// The user's unlocked state: the whenUnlocked class keys, in the kernel keyring with an
    /// idle timeout, for every process of the user (``VaultConfiguration/userUnlockTimeout``).
    var unlockedDescription: String { Self.unlockedDescription(vaultID: header.vaultID) }

    static func unlockedDescription(vaultID: [UInt8]) -> String { cacheDescription(vaultID: vaultID) + ":unlocked" }

    var usesUserUnlock: Bool { lockState.policy.userUnlockSeconds != nil && header.hasPassphrase }

    var userUnlockSeconds: UInt32 { lockState.policy.userUnlockSeconds ?? 0 }

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

    /// One use of the vault, as every operation under the engine's lock begins: the idle lock
    /// first (``touch()``), then the user's lock state, which a use keeps alive
    /// (``LockState/followUserUnlock(in:at:hasPassphrase:asUse:)``).
    func beginUse() {
        touch()
        followUserLock(asUse: true)
    }

    /// Follows the user's lock state: a lock since this process unlocked (another stamp) locks it
    /// at once; the end of the user's unlocked state drops the keys held through it. A use
    /// (`asUse`) also pushes that state's timeout back; a look at the lock state does not.
    func followUserLock(asUse: Bool) {
        let record = userLockRecord
        let hasPassphrase = header.hasPassphrase
        lockState.followLockStamp(in: record, hasPassphrase: hasPassphrase)
        lockState.followUserUnlock(in: record, at: ContinuousClock.now, hasPassphrase: hasPassphrase, asUse: asUse)
    }

    /// The user's lock state in the kernel keyring, as the lock state reads it.
    var userLockRecord: KernelUserLockRecord { KernelUserLockRecord(keyring: kernelKeyring, vaultID: header.vaultID) }

    /// The user's lock stamp: random bytes replaced by every lock of the vault (`keychain lock`,
    /// `Service.Lock`, a suspend or a session lock), in the kernel keyring until reboot. A process
    /// that unlocked, by any means, before the stamp it read changed is locked at its next use:
    /// one lock reaches every process of the user at once.
    var lockStampDescription: String { Self.lockStampDescription(vaultID: header.vaultID) }

    static func lockStampDescription(vaultID: [UInt8]) -> String { cacheDescription(vaultID: vaultID) + ":lock" }

    /// The user's lock stamp now; nil without one (no lock since boot) or without the kernel keyring.
    func currentLockStamp() -> [UInt8]? {
        lockState.currentLockStamp(in: userLockRecord, hasPassphrase: header.hasPassphrase)
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

    var cacheDescription: String { Self.cacheDescription(vaultID: header.vaultID) }

    static func cacheDescription(vaultID: [UInt8]) -> String { "swift-keychain:v1:" + Digest.hex(vaultID) }

    func publishToKernelKeyring() { publishToKernelKeyring(forUser: lockState.publishesUserUnlock) }

    /// Publishes the afterFirstUnlock keys, and with `forUser` the whenUnlocked ones as the
    /// user's unlocked state, to the kernel keyring.
    func publishToKernelKeyring(forUser: Bool) {
        // The check values also mark a rotation for other processes: recorded with or without a
        // cache; keys a rotation retired are not published.
        guard recordKeyChecks() else { return }
        guard header.hasPassphrase, configuration.usesKernelKeyring, let payload = lockState.keys.cachePayload() else { return }
        do {
            try kernelKeyring.store(payload, as: cacheDescription)
            if usesUserUnlock, forUser, let unlocked = lockState.keys.cachePayload(of: { $0.opensWithUserUnlock }) {
                try kernelKeyring.store(Self.unlockedPayload(timeout: userUnlockSeconds, unlocked), as: unlockedDescription, timeout: userUnlockSeconds)
            }
            lockState.found(kernelKeyring: .available)
        } catch {
            // Fall back to this process only (the keys stay held), and say so in status().
            lockState.found(kernelKeyring: .unavailable(reason: error.description))
        }
    }

    func currentKernelKeyringState() -> VaultStatus.KernelKeyringState {
        guard configuration.usesKernelKeyring else { return .disabled }
        if let known = lockState.kernelKeyring { return known }
        let state: VaultStatus.KernelKeyringState
        switch kernelKeyring.probe() {
        case .success: state = .available
        case .failure(let error): state = .unavailable(reason: error.description)
        }
        lockState.found(kernelKeyring: state)
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

/// The user's lock state as the kernel keyring keeps it for every process of the user: the lock
/// stamp and the user's unlocked state of one vault (``VaultState/lockStampDescription``,
/// ``VaultState/unlockedDescription``). Names are made only when a key is looked up by name.
struct KernelUserLockRecord: UserLockRecord {
    let keyring: KernelKeyring
    let vaultID: [UInt8]

    func lockStamp(serial: inout Int32?) -> [UInt8]? {
        // A lock replaces the stamp's payload in place (the same key): once found, the key is
        // read by its number, one system call at each use instead of a search and a read.
        if let known = serial, let stamp = keyring.read(serial: known, limit: 64) { return stamp }
        serial = keyring.serial(of: VaultState.lockStampDescription(vaultID: vaultID))
        return serial.flatMap { keyring.read(serial: $0, limit: 64) }
    }

    func userUnlockLasts() -> Bool { keyring.load(VaultState.unlockedDescription(vaultID: vaultID)) != nil }

    func pushBackUserUnlock(seconds: UInt32) {
        // The timeout of the user's latest unlock (`keychain unlock --timeout` since), where the
        // state names one, not the one this process chose.
        let description = VaultState.unlockedDescription(vaultID: vaultID)
        let latest = keyring.load(description).flatMap { VaultState.splitUnlockedPayload($0)?.0 } ?? seconds
        keyring.refresh(description, timeout: latest)
    }
}
