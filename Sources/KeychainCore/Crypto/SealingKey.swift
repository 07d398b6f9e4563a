internal import COpenSSL
import FoundationEssentials
import Synchronization

/// An AES-256-GCM key with its key schedule computed once: each seal or open re-initialises
/// the keyed OpenSSL context with a fresh nonce only (`EVP_*Init_ex` with a NULL key keeps the
/// key), rather than repeating the key setup for every call (keychain-bench's
/// `AES-256-GCM seal+open, 32-byte value` row).
final class SealingKey: Sendable {
    let key: SecretBytes
    // Every call changes the keyed contexts, so `lock` serialises their use: they are only
    // touched while it is held (or in deinit, when no other reference is left).
    private let lock = Mutex(())
    nonisolated(unsafe) private let encryptor: OpaquePointer
    nonisolated(unsafe) private let decryptor: OpaquePointer

    init(_ key: SecretBytes) {
        precondition(key.count == AESGCM.keySize)
        self.key = key
        guard let encryptor = EVP_CIPHER_CTX_new(), let decryptor = EVP_CIPHER_CTX_new() else {
            fatalError("EVP_CIPHER_CTX_new failed")
        }
        let ok = key.withUnsafeBytes { k in
            let bytes = k.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return EVP_EncryptInit_ex(encryptor, EVP_aes_256_gcm(), nil, bytes, nil) == 1
                && EVP_DecryptInit_ex(decryptor, EVP_aes_256_gcm(), nil, bytes, nil) == 1
        }
        precondition(ok, "AES-256-GCM key setup failed")
        self.encryptor = encryptor
        self.decryptor = decryptor
    }

    deinit {
        // EVP_CIPHER_CTX_free cleanses the key schedule.
        EVP_CIPHER_CTX_free(encryptor)
        EVP_CIPHER_CTX_free(decryptor)
    }

    func seal(_ plaintext: UnsafeRawBufferPointer, associatedData: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try lock.withLock { (_) throws(OpenSSLError) in
            try AESGCM.seal(plaintext, context: encryptor, associatedData: associatedData)
        }
    }

    func seal(_ plaintext: SecretBytes, associatedData: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws(OpenSSLError) in try seal(p, associatedData: associatedData) }
    }

    /// Opens into `out` (exactly the plaintext's size), as ``AESGCM/open(_:context:associatedData:into:)``.
    func open(_ sealed: [UInt8], associatedData: [UInt8], into out: UnsafeMutableRawBufferPointer) throws(AESGCM.AuthenticationFailure) {
        try lock.withLock { (_) throws(AESGCM.AuthenticationFailure) in
            try sealed.withBytes { (s: UnsafeRawBufferPointer) throws(AESGCM.AuthenticationFailure) in
                try AESGCM.open(s, context: decryptor, associatedData: associatedData, into: out)
            }
        }
    }

    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws(AESGCM.AuthenticationFailure) -> SecretBytes {
        try lock.withLock { (_) throws(AESGCM.AuthenticationFailure) in
            try sealed.withBytes { (s: UnsafeRawBufferPointer) throws(AESGCM.AuthenticationFailure) in
                try AESGCM.open(s, context: decryptor, associatedData: associatedData)
            }
        }
    }
}
