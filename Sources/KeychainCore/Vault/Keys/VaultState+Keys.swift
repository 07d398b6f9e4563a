import Dispatch
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The key bag: the master, lookup and class keys, the lock state (the process's and the
/// user's), the kernel-keyring cache and its key checks.
extension VaultState {
    // MARK: - Keys (mutex held)

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
        guard keyBag.userUnlockCheckDue(at: ContinuousClock.now) else { return }
        if kernelKeyring.load(unlockedDescription) == nil {
            keyBag.userUnlockEnded()
        } else {
            kernelKeyring.refresh(unlockedDescription, timeout: keyBag.heldUnlockTimeout)
        }
    }

    var cacheDescription: String {
        "swift-keychain:v1:" + Digest.hex(header.vaultID)
    }

    func lookupKey() throws(StoreError) -> HMACKey {
        if let lookup = keyBag.keys.lookup { return lookup }
        try loadImplicitKeys()
        guard let lookup = keyBag.keys.lookup else { throw .locked }
        return lookup
    }

    /// Loads what needs no passphrase: a key-file vault's master key, or the afterFirstUnlock
    /// keys another process left in the kernel keyring.
    func loadImplicitKeys() throws(StoreError) {
        if keyBag.keys.master != nil { return }
        switch header.protection {
        case .keyFile:
            let master: SecretBytes
            do {
                master = try masterKeyFromKeyFile()
            } catch {
                // Another process may have set a passphrase and removed the key file.
                try refreshHeader()
                if header.hasPassphrase { return try loadImplicitKeys() }
                throw error
            }
            try adopt(master: master)
        case .passphrase:
            guard configuration.usesKernelKeyring else { return }
            if keyBag.keys.lookup == nil, let payload = kernelKeyring.load(cacheDescription) {
                _ = try adoptChecked(payload, allowed: { $0.survivesLock })
            }
            if usesUserUnlock, !keyBag.keys.classes.keys.contains(where: \.opensWithUserUnlock),
                let stored = kernelKeyring.load(unlockedDescription), let (timeout, payload) = Self.splitUnlockedPayload(stored),
                try adoptChecked(payload, allowed: { $0.opensWithUserUnlock })
            {
                keyBag.holdThroughUserUnlock(timeout: timeout, at: ContinuousClock.now)
                kernelKeyring.refresh(unlockedDescription, timeout: timeout)
            }
        }
    }

    /// Adopts the keys of a kernel-keyring payload only if every one of them has the check value
    /// the vault records (``KeyCheck``); a planted or stale payload is ignored.
    func adoptChecked(_ payload: SecretBytes, allowed: (Accessibility) -> Bool) throws(StoreError) -> Bool {
        var candidate = KeyRing()
        guard candidate.adopt(cachePayload: payload, allowed: allowed) else { return false }
        let bytes = try storedKeyChecks()
        guard let bytes, let stored = KeyCheck.decode(bytes), KeyCheck.verify(candidate, against: stored, vaultID: header.vaultID) else { return false }
        if let lookup = keyBag.keys.lookup {
            // Another lookup key than the one this process holds: not this vault's cache.
            guard Digest.equal(lookupCheck(lookup), lookupCheck(candidate.lookup!)) else { return false }
        } else {
            keyBag.keys.lookup = candidate.lookup
        }
        for (accessibility, key) in candidate.classes where keyBag.keys.classes[accessibility] == nil { keyBag.keys.classes[accessibility] = key }
        return true
    }

    /// The vault's recorded check values (``KeyCheck``) as stored; nil when none are recorded.
    func storedKeyChecks() throws(StoreError) -> [UInt8]? {
        try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readKeyCheck).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }
    }

    /// The check value of `lookup` as a lookup key of this vault.
    func lookupCheck(_ lookup: HMACKey) -> [UInt8] {
        KeyCheck.value(of: lookup.key, code: KeyCheck.lookupCode, vaultID: header.vaultID)
    }

    /// Records the check values of the keys this process unwrapped with the master key, so that
    /// other processes can trust them from the cache. Best effort: a read-only vault keeps its
    /// old checks (and other processes then need the passphrase). False when the vault's
    /// recorded lookup key is another one: this process's keys were retired by a rotation, and
    /// must be neither recorded nor published.
    @discardableResult
    func recordKeyChecks() -> Bool {
        guard keyBag.keys.master != nil else { return true }
        let checks = KeyCheck.values(of: keyBag.keys, vaultID: header.vaultID)
        var current = true
        // Read, compared and written in one transaction: a rotation committing in between
        // must not have its checks replaced by this process's retired ones.
        let record = { () throws(StoreError) in
            let stored = try self.storedKeyChecks()
            var merged = stored.flatMap(KeyCheck.decode) ?? [:]
            // A lookup key's check changes only with a rotation, which records it in its own
            // transaction: a process whose keys another process retired (its unlock read the
            // header before that rotation committed) must not put its retired checks back.
            if let recorded = merged[KeyCheck.lookupCode], let mine = checks[KeyCheck.lookupCode], !Digest.equal(recorded, mine) {
                current = false
                return
            }
            merged.merge(checks) { $1 }
            let encoded = KeyCheck.encode(merged)
            guard encoded != stored else { return }
            try self.sql { () throws(SQLiteError) in try self.connection.statement(VaultSchema.writeKeyCheck).run([.blob(encoded)]) }
        }
        if connection.isInTransaction { try? record() } else { try? writeTransaction(record) }
        return current
    }

    func adopt(master: SecretBytes) throws(StoreError) {
        keyBag.adopt(master: master, lookup: try Self.lookupKey(master: master))
    }

    static func lookupKey(master: SecretBytes) throws(StoreError) -> HMACKey {
        HMACKey(try crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: master, info: "swift-keychain lookup v1") })
    }

    func masterKeyFromKeyFile() throws(StoreError) -> SecretBytes {
        let keyFile = try VaultFile.readKeyFile(location.keyFilePath)
        guard keyFile.count == 32 else { throw .corrupted("the key file \(location.keyFilePath) has the wrong size") }
        do {
            return try AESGCM.open(header.wrappedMasterKey, key: keyFile, associatedData: RecordCoding.masterKeyAssociatedData(header))
        } catch {
            throw .tampered("the master key does not open with the key file (header or key file altered)")
        }
    }

    /// The master key, and the passphrase's scrypt output (nil for a key-file vault).
    func openMasterKey(passphrase: SecretBytes) throws(StoreError) -> (SecretBytes, SecretBytes?) {
        guard case .passphrase(let parameters, let salt) = header.protection else { return (try masterKeyFromKeyFile(), nil) }
        let derived = try Self.crypto { () throws(OpenSSLError) in
            try Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        }
        do {
            return (try AESGCM.open(header.wrappedMasterKey, key: derived, associatedData: RecordCoding.masterKeyAssociatedData(header)), derived)
        } catch {
            // Indistinguishable by design from an altered salt or parameter; the header's
            // checksum already caught accidental damage.
            throw .wrongPassphrase
        }
    }

    func wrappingKey(for accessibility: Accessibility, master: SecretBytes) throws(StoreError) -> SecretBytes {
        if accessibility.isThisDeviceOnly {
            guard let machineID else { throw .unavailable("no machine id (/etc/machine-id) to bind ThisDeviceOnly items to") }
            return try Self.crypto { () throws(OpenSSLError) in
                try HKDF.deriveKey(from: master, salt: machineID, info: "swift-keychain class-wrap this-device-only v1")
            }
        }
        return try Self.crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: master, info: "swift-keychain class-wrap v1") }
    }

    func machineCheck() throws(StoreError) -> [UInt8]? {
        guard let machineID else { return nil }
        return try lookupKey().authenticationCode(Array("machine".utf8) + machineID)
    }

    /// The class key for `accessibility`: from memory, the kernel keyring, or unwrapped with the
    /// master key; created (inside the caller's write transaction) when `create` and missing.
    func classKey(_ accessibility: Accessibility, create: Bool) throws(StoreError) -> SealingKey {
        if let key = keyBag.keys.classes[accessibility] { return key }
        if accessibility == .whenPasscodeSetThisDeviceOnly && !header.hasPassphrase { throw .passphraseRequired }
        try loadImplicitKeys()
        if let key = keyBag.keys.classes[accessibility] { return key }
        guard let master = keyBag.keys.master else { throw .locked }
        if accessibility.isThisDeviceOnly { try checkMachineBinding(create: create) }
        let wrapping = try wrappingKey(for: accessibility, master: master)
        let aad = RecordCoding.classKeyAssociatedData(vaultID: header.vaultID, accessibility: accessibility)
        if let wrapped = try wrappedClassKeys()[accessibility] {
            do {
                let key = SealingKey(try AESGCM.open(wrapped, key: wrapping, associatedData: aad))
                keyBag.keys.classes[accessibility] = key
                return key
            } catch {
                // The master key in hand may be one another process retired a moment ago.
                if try dropKeysIfRotated() { throw .locked }
                throw .tampered("the wrapped key of class \(accessibility) failed authentication")
            }
        }
        guard create else { throw .tampered("items exist for class \(accessibility), which has no key") }
        let key = SealingKey(SecretBytes.random(count: 32))
        let wrapped = try Self.crypto { () throws(OpenSSLError) in try AESGCM.seal(key.key, key: wrapping, associatedData: aad) }
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.insertClassKey).run([.integer(Int64(accessibility.code)), .blob(wrapped)])
        }
        keyBag.keys.classes[accessibility] = key
        // Inside a write (a rotation's, most of all) the new key is published after the commit:
        // a cache of keys the vault may yet roll back would lock out every process that uses it.
        if accessibility.survivesLock || accessibility.opensWithUserUnlock, !connection.isInTransaction { publishToKernelKeyring() }
        return key
    }

    func checkMachineBinding(create: Bool) throws(StoreError) {
        guard let expected = try machineCheck() else {
            throw .unavailable("no machine id (/etc/machine-id) to bind ThisDeviceOnly items to")
        }
        let stored = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readMachineCheck).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in
                try s.step() ? s.blob(0) : nil
            }
        }
        if let stored {
            guard Digest.equal(stored, expected) else { throw .boundToAnotherMachine }
        } else if create {
            try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writeMachineCheck).run([.blob(expected)]) }
        }
    }

    func wrappedClassKeys() throws(StoreError) -> [Accessibility: [UInt8]] {
        var result: [Accessibility: [UInt8]] = [:]
        var unknown = false
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.readClassKeys).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    guard let accessibility = Accessibility(code: UInt8(truncatingIfNeeded: s.integer(0))) else { unknown = true; continue }
                    result[accessibility] = s.blob(1)
                }
            }
        }
        if unknown { throw .corrupted("a class key has an unknown protection code") }
        return result
    }

    /// Unwraps every existing class key this machine can open, so that afterFirstUnlock keys
    /// can be published to the kernel keyring right after an unlock.
    func loadExistingClassKeys() throws(StoreError) {
        for accessibility in try wrappedClassKeys().keys.sorted(by: { $0.code < $1.code }) {
            do {
                _ = try classKey(accessibility, create: false)
            } catch .boundToAnotherMachine {
                continue
            } catch .unavailable {
                continue
            }
        }
    }

    func classAvailable(_ accessibility: Accessibility) -> Bool {
        if keyBag.keys.classes[accessibility] != nil { return true }
        if accessibility == .whenPasscodeSetThisDeviceOnly && !header.hasPassphrase { return false }
        guard keyBag.keys.master != nil else { return false }
        if accessibility.isThisDeviceOnly {
            guard (try? checkMachineBinding(create: false)) != nil else { return false }
        }
        return true
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

    func lockKeys() {
        idleTimer?.cancel()
        idleTimer = nil
        // Without a passphrase there is nothing to lock: the key file reopens it on next use.
        keyBag.keys.lock()
    }

    /// Locks first if the vault sat unused past its idle timeout, then records this use.
    func touch() {
        if keyBag.use(at: ContinuousClock.now, idleTimeout: configuration.idleTimeout, hasPassphrase: header.hasPassphrase) { lockKeys() }
    }

    func startIdleTimer() {
        guard let timeout = configuration.idleTimeout, header.hasPassphrase else { return }
        idleTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        let interval = max(timeout / 4, .milliseconds(10))
        let nanoseconds = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler { [onIdle] in onIdle?(timeout) }
        idleTimer = timer
        timer.resume()
    }
}
