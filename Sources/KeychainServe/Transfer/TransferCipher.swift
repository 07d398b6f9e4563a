import KeychainCore

/// The cipher of the `dh-ietf1024-sha256-aes128-cbc-pkcs7` session (``AESCBC``): each secret
/// under a fresh random 16-byte IV, which travels as the secret's parameters.
enum TransferCipher {
    /// Encrypts `secret` under `key`. Returns the IV (the secret's parameters) and the ciphertext.
    static func seal(_ secret: SecretBytes, key: SecretBytes) throws(ServiceError) -> (iv: SecretBytes, ciphertext: SecretBytes) {
        let iv = SecretBytes.random(count: AESCBC.blockSize)
        do {
            return (iv, try AESCBC.seal(secret, key: key, iv: iv))
        } catch {
            throw .init(.failed, "the secret could not be encrypted for transfer: \(error)")
        }
    }

    /// Decrypts what a client sealed under `key` with `iv`.
    /// - Throws: `InvalidArgs` for an IV that is not 16 bytes, a ciphertext that is not whole
    ///   blocks, or padding that does not check (another key, or damaged bytes).
    static func open(_ ciphertext: SecretBytes, iv: SecretBytes, key: SecretBytes) throws(ServiceError) -> SecretBytes {
        guard iv.count == AESCBC.blockSize else { throw .init(.invalidArgs, "the secret's parameters are not a 16-byte IV, as this session's algorithm needs") }
        guard ciphertext.count > 0, ciphertext.count % AESCBC.blockSize == 0 else {
            throw .init(.invalidArgs, "the secret is not whole AES blocks: it was not encrypted with this session's algorithm")
        }
        do {
            return try AESCBC.open(ciphertext, key: key, iv: iv)
        } catch {
            throw .init(.invalidArgs, "the secret does not decrypt with this session's key (another session's, or damaged)")
        }
    }
}
