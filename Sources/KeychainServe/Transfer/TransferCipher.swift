internal import COpenSSL
import KeychainCore

/// AES-128-CBC with PKCS#7 padding (OpenSSL EVP), the cipher of the
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` session: each secret under a fresh random 16-byte IV.
enum TransferCipher {
    static let blockSize = 16

    /// Encrypts `secret` under `key`. Returns the IV (the secret's parameters) and the ciphertext.
    static func seal(_ secret: SecretBytes, key: SecretBytes) throws(ServiceError) -> (iv: SecretBytes, ciphertext: SecretBytes) {
        let iv = SecretBytes.random(count: blockSize)
        let capacity = secret.count + blockSize
        var written = 0
        let buffer = try SecretBytes(count: capacity) { (out: UnsafeMutableRawBufferPointer) throws(ServiceError) in
            written = try crypt(encrypt: true, secret, key: key, iv: iv, into: out)
        }
        return (iv, prefix(buffer, written))
    }

    /// Decrypts what a client sealed under `key` with `iv`.
    /// - Throws: `InvalidArgs` for an IV that is not 16 bytes, a ciphertext that is not whole
    ///   blocks, or padding that does not check (another key, or damaged bytes).
    static func open(_ ciphertext: SecretBytes, iv: SecretBytes, key: SecretBytes) throws(ServiceError) -> SecretBytes {
        guard iv.count == blockSize else { throw .init(.invalidArgs, "the secret's parameters are not a 16-byte IV, as this session's algorithm needs") }
        guard ciphertext.count > 0, ciphertext.count % blockSize == 0 else {
            throw .init(.invalidArgs, "the secret is not whole AES blocks: it was not encrypted with this session's algorithm")
        }
        var written = 0
        let buffer = try SecretBytes(count: ciphertext.count + blockSize) { (out: UnsafeMutableRawBufferPointer) throws(ServiceError) in
            written = try crypt(encrypt: false, ciphertext, key: key, iv: iv, into: out)
        }
        return prefix(buffer, written)
    }

    private static func prefix(_ bytes: SecretBytes, _ count: Int) -> SecretBytes {
        bytes.withUnsafeBytes { raw in SecretBytes(count: count) { out in if count > 0 { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<count])) } } }
    }

    private static func crypt(encrypt: Bool, _ input: SecretBytes, key: SecretBytes, iv: SecretBytes, into out: UnsafeMutableRawBufferPointer) throws(ServiceError) -> Int {
        guard let context = EVP_CIPHER_CTX_new() else { throw .init(.failed, "OpenSSL could not allocate a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        let ok = key.withUnsafeBytes { key in
            iv.withUnsafeBytes { iv in
                input.withUnsafeBytes { input -> Int? in
                    let k = key.baseAddress!.assumingMemoryBound(to: UInt8.self), v = iv.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let o = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let i = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    var first: Int32 = 0, last: Int32 = 0
                    if encrypt {
                        guard EVP_EncryptInit_ex(context, EVP_aes_128_cbc(), nil, k, v) == 1,
                            EVP_EncryptUpdate(context, o, &first, i, Int32(input.count)) == 1,
                            EVP_EncryptFinal_ex(context, o + Int(first), &last) == 1
                        else { return nil }
                    } else {
                        guard EVP_DecryptInit_ex(context, EVP_aes_128_cbc(), nil, k, v) == 1,
                            EVP_DecryptUpdate(context, o, &first, i, Int32(input.count)) == 1,
                            EVP_DecryptFinal_ex(context, o + Int(first), &last) == 1
                        else { return nil }
                    }
                    return Int(first + last)
                }
            }
        }
        guard let ok else {
            ERR_clear_error()
            if encrypt { throw .init(.failed, "OpenSSL could not encrypt the secret for transfer") }
            throw .init(.invalidArgs, "the secret does not decrypt with this session's key (another session's, or damaged)")
        }
        return ok
    }
}
