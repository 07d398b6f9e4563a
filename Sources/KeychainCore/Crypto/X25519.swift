internal import COpenSSL

/// X25519 key agreement (RFC 7748) through OpenSSL's EVP_PKEY interface.
///
/// The vault uses it so that items behind a proof of presence can be written without that
/// proof: anyone holding the public key can seal to it, only the private key (which the proof
/// unwraps) can open.
enum X25519 {
    static let keySize = 32

    /// A fresh key pair: the private key (32 bytes) and its public key.
    static func generate() throws(OpenSSLError) -> (privateKey: SecretBytes, publicKey: [UInt8]) {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_id(X25519)") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_keygen(ctx, &key) == 1, let key else { throw OpenSSLError("EVP_PKEY_keygen(X25519)") }
        defer { EVP_PKEY_free(key) }
        let privateKey = try SecretBytes(count: keySize) { (out: UnsafeMutableRawBufferPointer) throws(OpenSSLError) in
            var length = keySize
            guard EVP_PKEY_get_raw_private_key(key, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1, length == keySize else {
                throw OpenSSLError("EVP_PKEY_get_raw_private_key")
            }
        }
        return (privateKey, try publicKey(of: key))
    }

    /// The shared secret of `privateKey` and `peerPublicKey`.
    /// - Throws: for a malformed key, or a low-order peer key (an all-zero result).
    static func sharedSecret(privateKey: SecretBytes, peerPublicKey: [UInt8]) throws(OpenSSLError) -> SecretBytes {
        guard peerPublicKey.count == keySize else { throw OpenSSLError("X25519 public key size") }
        let own = privateKey.withUnsafeBytes { p in
            EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, p.baseAddress!.assumingMemoryBound(to: UInt8.self), p.count)
        }
        guard let own else { throw OpenSSLError("EVP_PKEY_new_raw_private_key") }
        defer { EVP_PKEY_free(own) }
        let peer = peerPublicKey.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, $0.baseAddress, $0.count) }
        guard let peer else { throw OpenSSLError("EVP_PKEY_new_raw_public_key") }
        defer { EVP_PKEY_free(peer) }
        guard let ctx = EVP_PKEY_CTX_new(own, nil) else { throw OpenSSLError("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer(ctx, peer) == 1 else { throw OpenSSLError("EVP_PKEY_derive_set_peer") }
        // OpenSSL refuses (fails the derive) when the result is all zeros, i.e. a low-order peer key.
        return try SecretBytes(count: keySize) { (out: UnsafeMutableRawBufferPointer) throws(OpenSSLError) in
            var length = keySize
            guard EVP_PKEY_derive(ctx, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1, length == keySize else {
                throw OpenSSLError("EVP_PKEY_derive(X25519)")
            }
        }
    }

    /// The public key of `privateKey`.
    static func publicKey(privateKey: SecretBytes) throws(OpenSSLError) -> [UInt8] {
        let own = privateKey.withUnsafeBytes { p in
            EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, p.baseAddress!.assumingMemoryBound(to: UInt8.self), p.count)
        }
        guard let own else { throw OpenSSLError("EVP_PKEY_new_raw_private_key") }
        defer { EVP_PKEY_free(own) }
        return try publicKey(of: own)
    }

    private static func publicKey(of key: OpaquePointer) throws(OpenSSLError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: keySize)
        var length = keySize
        guard EVP_PKEY_get_raw_public_key(key, &out, &length) == 1, length == keySize else { throw OpenSSLError("EVP_PKEY_get_raw_public_key") }
        return out
    }
}
