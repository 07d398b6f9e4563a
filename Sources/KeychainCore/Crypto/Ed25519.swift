internal import COpenSSL

/// Ed25519 signatures (RFC 8032) through OpenSSL's EVP interface: `EVP_PKEY_ED25519` keys,
/// one-shot `EVP_DigestSign` and `EVP_DigestVerify` (Ed25519 hashes the message itself, so no
/// digest is named).
///
/// Sync uses it so that each device's writes carry its own signature: a device that knows the
/// group's shared keys but is no longer a member cannot write as one.
enum Ed25519 {
    static let keySize = 32
    static let signatureSize = 64

    /// A fresh key pair: the private key (32 bytes) and its public key.
    static func generate() throws(OpenSSLError) -> (privateKey: SecretBytes, publicKey: [UInt8]) {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_id(ED25519)") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_keygen(ctx, &key) == 1, let key else { throw OpenSSLError("EVP_PKEY_keygen(ED25519)") }
        defer { EVP_PKEY_free(key) }
        let privateKey = try SecretBytes(count: keySize) { (out: UnsafeMutableRawBufferPointer) throws(OpenSSLError) in
            var length = keySize
            guard EVP_PKEY_get_raw_private_key(key, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1, length == keySize else {
                throw OpenSSLError("EVP_PKEY_get_raw_private_key")
            }
        }
        var publicKey = [UInt8](repeating: 0, count: keySize)
        var length = keySize
        guard EVP_PKEY_get_raw_public_key(key, &publicKey, &length) == 1, length == keySize else { throw OpenSSLError("EVP_PKEY_get_raw_public_key") }
        return (privateKey, publicKey)
    }

    /// The signature of `message` by `privateKey`.
    static func sign(_ message: [UInt8], privateKey: SecretBytes) throws(OpenSSLError) -> [UInt8] {
        let key = privateKey.withUnsafeBytes { p in
            EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, p.baseAddress!.assumingMemoryBound(to: UInt8.self), p.count)
        }
        guard let key else { throw OpenSSLError("EVP_PKEY_new_raw_private_key(ED25519)") }
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { throw OpenSSLError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, nil, nil, key) == 1 else { throw OpenSSLError("EVP_DigestSignInit(ED25519)") }
        var signature = [UInt8](repeating: 0, count: signatureSize)
        var length = signatureSize
        guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1, length == signatureSize else {
            throw OpenSSLError("EVP_DigestSign(ED25519)")
        }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`; false for a malformed key
    /// or signature too.
    static func isValid(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureSize, publicKey.count == keySize else { return false }
        let key = publicKey.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }
        guard let key else { return false }
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, nil, nil, key) == 1 else { return false }
        return EVP_DigestVerify(ctx, signature, signature.count, message, message.count) == 1
    }
}
