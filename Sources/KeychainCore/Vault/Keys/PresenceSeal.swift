/// The second lock on items under ``AccessControl``: their value is sealed to the vault's
/// presence key pair, whose private key only the passphrase unwraps.
///
/// Sealing (no proof needed): an ephemeral X25519 key pair, the shared secret with the vault's
/// presence public key, HKDF-SHA256 over it (salted with both public keys) to an AES-256-GCM
/// key. Layout: `ephemeral public key (32) || AES-GCM sealed value`. The result is then sealed
/// again under the item's class key, so a locked vault keeps such items closed as well.
enum PresenceSeal {
    static func seal(_ value: SecretBytes, to publicKey: [UInt8], associatedData: [UInt8]) throws(OpenSSLError) -> SecretBytes {
        let ephemeral = try X25519.generate()
        let key = try itemKey(
            shared: X25519.sharedSecret(privateKey: ephemeral.privateKey, peerPublicKey: publicKey),
            ephemeralPublicKey: ephemeral.publicKey, publicKey: publicKey)
        let sealed = try AESGCM.seal(value, key: key, associatedData: associatedData)
        return SecretBytes(ephemeral.publicKey + sealed)
    }

    /// The value, or nil when the bytes are malformed or fail authentication.
    static func open(_ sealed: SecretBytes, privateKey: SecretBytes, publicKey: [UInt8], associatedData: [UInt8]) -> SecretBytes? {
        sealed.withUnsafeBytes { bytes -> SecretBytes? in
            guard bytes.count >= X25519.keySize + AESGCM.overhead else { return nil }
            let ephemeralPublicKey = Array(bytes[0..<X25519.keySize])
            guard let shared = try? X25519.sharedSecret(privateKey: privateKey, peerPublicKey: ephemeralPublicKey),
                let key = try? itemKey(shared: shared, ephemeralPublicKey: ephemeralPublicKey, publicKey: publicKey)
            else { return nil }
            return try? AESGCM.open(UnsafeRawBufferPointer(rebasing: bytes[X25519.keySize...]), key: key, associatedData: associatedData)
        }
    }

    private static func itemKey(shared: SecretBytes, ephemeralPublicKey: [UInt8], publicKey: [UInt8]) throws(OpenSSLError) -> SecretBytes {
        try HKDF.deriveKey(from: shared, salt: ephemeralPublicKey + publicKey, info: "swift-keychain presence item v1")
    }
}

/// The vault's presence key pair as stored (meta row `presence`):
/// `version (1) || public key (32) || HMAC of the public key under the lookup key (32) || wrapped private key`.
///
/// The private key is wrapped (AES-256-GCM) under a key derived from the passphrase's scrypt
/// output, so only the passphrase opens it; the HMAC lets writers trust the public key they
/// seal to without that passphrase.
struct PresenceKeyRecord {
    /// Version 2 tags the public key under a key derived from the master key, which is never
    /// cached; version 1 tagged it under the lookup key, which the kernel-keyring cache holds
    /// (a same-user process could swap in its own key). Version 1 records are upgraded at the
    /// next unlock, after proving that the wrapped private key matches the public key.
    static let version: UInt8 = 2
    var recordVersion: UInt8 = version
    var publicKey: [UInt8]
    var publicKeyTag: [UInt8]
    var wrappedPrivateKey: [UInt8]

    init(publicKey: [UInt8], publicKeyTag: [UInt8], wrappedPrivateKey: [UInt8], recordVersion: UInt8 = version) {
        self.publicKey = publicKey
        self.publicKeyTag = publicKeyTag
        self.wrappedPrivateKey = wrappedPrivateKey
        self.recordVersion = recordVersion
    }

    /// A current record of a key pair: the private key wrapped for the passphrase whose scrypt
    /// output is `passphraseKey`, the public key tagged under `master`.
    init(privateKey: SecretBytes, publicKey: [UInt8], passphraseKey: SecretBytes, master: SecretBytes, vaultID: [UInt8]) throws(OpenSSLError) {
        let wrapped = try AESGCM.seal(
            privateKey, key: Self.wrappingKey(passphraseKey: passphraseKey),
            associatedData: Self.wrappingAssociatedData(vaultID: vaultID, publicKey: publicKey))
        self.init(publicKey: publicKey, publicKeyTag: try Self.tag(publicKey, master: master), wrappedPrivateKey: wrapped)
    }

    /// The wrapped private key, opened with the passphrase's scrypt output; nil when it does
    /// not open (another passphrase, or an altered record).
    func privateKey(passphraseKey: SecretBytes, vaultID: [UInt8]) throws(OpenSSLError) -> SecretBytes? {
        let wrapping = try Self.wrappingKey(passphraseKey: passphraseKey)
        return try? AESGCM.open(wrappedPrivateKey, key: wrapping, associatedData: Self.wrappingAssociatedData(vaultID: vaultID, publicKey: publicKey))
    }

    /// The tag that vouches for `publicKey` (version 2), under a key derived from `master`.
    static func tag(_ publicKey: [UInt8], master: SecretBytes) throws(OpenSSLError) -> [UInt8] {
        try tagKey(master: master).authenticationCode(tagMessage(publicKey))
    }

    func encoded() -> [UInt8] { [recordVersion] + publicKey + publicKeyTag + wrappedPrivateKey }

    static func decode(_ bytes: [UInt8]) -> PresenceKeyRecord? {
        guard bytes.count == 1 + 32 + 32 + X25519.keySize + AESGCM.overhead, bytes[0] == 1 || bytes[0] == version else { return nil }
        return PresenceKeyRecord(
            publicKey: Array(bytes[1..<33]), publicKeyTag: Array(bytes[33..<65]), wrappedPrivateKey: Array(bytes[65...]),
            recordVersion: bytes[0])
    }

    static func tagMessage(_ publicKey: [UInt8]) -> [UInt8] { Array("presence public key".utf8) + publicKey }

    /// The key that tags the public key (version 2): from the master key alone.
    private static func tagKey(master: SecretBytes) throws(OpenSSLError) -> HMACKey {
        HMACKey(try HKDF.deriveKey(from: master, info: "swift-keychain presence-tag v2"))
    }

    private static func wrappingAssociatedData(vaultID: [UInt8], publicKey: [UInt8]) -> [UInt8] {
        Array("SKCV-presence-key".utf8) + [UInt8](bigEndian: UInt16(1)) + vaultID + publicKey
    }

    /// The key that wraps the private key: derived from the passphrase's scrypt output, apart
    /// from the master key's wrapping.
    private static func wrappingKey(passphraseKey: SecretBytes) throws(OpenSSLError) -> SecretBytes {
        try HKDF.deriveKey(from: passphraseKey, info: "swift-keychain presence-wrap v1")
    }
}
