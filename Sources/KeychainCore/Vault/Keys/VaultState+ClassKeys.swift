/// The class keys: unwrapped with the master key (bound to the machine for ThisDeviceOnly
/// classes), created inside a write when first needed, and the machine binding's check value.
extension VaultState {
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
        if let key = lockState.keys.classes[accessibility] { return key }
        if accessibility == .whenPasscodeSetThisDeviceOnly && !header.hasPassphrase { throw .passphraseRequired }
        try loadImplicitKeys()
        if let key = lockState.keys.classes[accessibility] { return key }
        guard let master = lockState.keys.master else { throw .locked }
        if accessibility.isThisDeviceOnly { try checkMachineBinding(create: create) }
        let wrapping = try wrappingKey(for: accessibility, master: master)
        let aad = RecordCoding.classKeyAssociatedData(vaultID: header.vaultID, accessibility: accessibility)
        if let wrapped = try wrappedClassKeys()[accessibility] {
            do {
                let key = SealingKey(try AESGCM.open(wrapped, key: wrapping, associatedData: aad))
                lockState.hold(key, for: accessibility)
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
        lockState.hold(key, for: accessibility)
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
        if lockState.holds(accessibility) { return true }
        if accessibility == .whenPasscodeSetThisDeviceOnly && !header.hasPassphrase { return false }
        guard lockState.keys.master != nil else { return false }
        if accessibility.isThisDeviceOnly {
            guard (try? checkMachineBinding(create: false)) != nil else { return false }
        }
        return true
    }
}
