import Dispatch
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Items under an access control: the presence key pair, its record, and the proof that opens it.
extension VaultState {
    // MARK: - Presence (access control)

    func storedPresenceKey() throws(StoreError) -> PresenceKeyRecord? {
        let bytes = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readPresenceKey).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in
                try s.step() ? s.blob(0) : nil
            }
        }
        guard let bytes else { return nil }
        guard let record = PresenceKeyRecord.decode(bytes) else { throw .corrupted("the presence key record does not decode") }
        return record
    }

    /// The presence public key writers seal to, checked against its tag under a key derived
    /// from the master key: only a process that unlocked with the passphrase can vouch for it,
    /// never one holding only cached keys (which a same-user process may have planted or read).
    func trustedPresencePublicKey() throws(StoreError) -> [UInt8] {
        guard header.hasPassphrase else { throw .passphraseRequired }
        guard let master = lockState.keys.master else { throw .locked }
        guard let record = try storedPresenceKey() else {
            throw .unavailable("the vault has no presence key yet: unlock it with its passphrase once")
        }
        guard record.recordVersion == PresenceKeyRecord.version else {
            throw .unavailable("the vault's presence key predates its current protection: unlock it with its passphrase to upgrade it")
        }
        let expected = try Self.crypto { () throws(OpenSSLError) in try PresenceKeyRecord.tag(record.publicKey, master: master) }
        guard Digest.equal(expected, record.publicKeyTag) else { throw .tampered("the presence public key failed verification") }
        return record.publicKey
    }

    /// Re-tags a version 1 presence record under the master-derived key, once its wrapped
    /// private key is proven to open with the passphrase and to match the public key (a
    /// swapped-in public key, tagged by someone who had only the cached lookup key, fails here).
    func upgradePresenceRecord(passphraseKey: SecretBytes) throws(StoreError) {
        guard let record = try storedPresenceKey(), record.recordVersion < PresenceKeyRecord.version, let master = lockState.keys.master else { return }
        let vaultID = header.vaultID
        let opened = try Self.crypto { () throws(OpenSSLError) in try record.privateKey(passphraseKey: passphraseKey, vaultID: vaultID) }
        guard let privateKey = opened, let derived = try? X25519.publicKey(privateKey: privateKey), Digest.equal(derived, record.publicKey)
        else { throw .tampered("the presence key record does not hold a key pair the passphrase opens") }
        let tag = try Self.crypto { () throws(OpenSSLError) in try PresenceKeyRecord.tag(record.publicKey, master: master) }
        let upgraded = PresenceKeyRecord(publicKey: record.publicKey, publicKeyTag: tag, wrappedPrivateKey: record.wrappedPrivateKey)
        try writeTransaction { () throws(StoreError) in
            try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(upgraded.encoded())]) }
        }
    }

    func createPresenceKeyIfMissing(passphraseKey: SecretBytes) throws(StoreError) {
        guard try storedPresenceKey() == nil else { return }
        let planned = header
        let record = try rewrappedPresenceKey(from: nil, to: passphraseKey)
        try writeTransaction { () throws(StoreError) in
            // Wrapped for this header's salt and vouched for by its master key: a rotation or
            // passphrase change since would make it a record no current key opens.
            try database.requireHeader(planned)
            guard try storedPresenceKey() == nil else { return }
            try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(record.encoded())]) }
        }
    }

    /// The presence key pair wrapped for the passphrase whose scrypt output is `newKey`: the
    /// existing pair, unwrapped with `currentKey`, or a new pair when there is none.
    func rewrappedPresenceKey(from currentKey: SecretBytes?, to newKey: SecretBytes) throws(StoreError) -> PresenceKeyRecord {
        let vaultID = header.vaultID
        var pair: (privateKey: SecretBytes, publicKey: [UInt8])?
        if let currentKey, let existing = try storedPresenceKey() {
            let opened = try Self.crypto { () throws(OpenSSLError) in try existing.privateKey(passphraseKey: currentKey, vaultID: vaultID) }
            guard let privateKey = opened else { throw .tampered("the presence private key does not open with the passphrase that opens the vault") }
            guard let derived = try? X25519.publicKey(privateKey: privateKey), Digest.equal(derived, existing.publicKey) else {
                throw .tampered("the presence key record does not hold a matching key pair")
            }
            pair = (privateKey, existing.publicKey)
        }
        guard let master = lockState.keys.master else { throw .locked }
        return try Self.crypto { () throws(OpenSSLError) -> PresenceKeyRecord in
            let (privateKey, publicKey) = if let pair { pair } else { try X25519.generate() }
            return try PresenceKeyRecord(privateKey: privateKey, publicKey: publicKey, passphraseKey: newKey, master: master, vaultID: vaultID)
        }
    }
}
