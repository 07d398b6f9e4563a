internal import COpenSSL

/// AES-128-CBC with PKCS#7 padding through OpenSSL's EVP interface, as the Secret Service's
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` session carries secrets. It authenticates nothing;
/// the vault never uses it.
package enum AESCBC {
    package static let keySize = 16
    package static let blockSize = 16

    /// Why a decryption failed: the bytes are not whole blocks, or the padding does not check
    /// (another key, or damaged bytes).
    package struct DecryptionFailure: Error {}

    /// Encrypts `plaintext` under `key` with `iv`, padded to whole blocks.
    package static func seal(_ plaintext: SecretBytes, key: SecretBytes, iv: SecretBytes) throws(OpenSSLError) -> SecretBytes {
        precondition(key.count == keySize && iv.count == blockSize)
        do {
            return try crypt(encrypt: true, plaintext, key: key, iv: iv)
        } catch {
            switch error {
            case .openSSL(let failure): throw failure
            case .decryption: preconditionFailure("encryption checks no padding")
            }
        }
    }

    /// Decrypts what was sealed under `key` with `iv`.
    package static func open(_ ciphertext: SecretBytes, key: SecretBytes, iv: SecretBytes) throws(DecryptionFailure) -> SecretBytes {
        precondition(key.count == keySize && iv.count == blockSize)
        guard ciphertext.count > 0, ciphertext.count % blockSize == 0 else { throw DecryptionFailure() }
        do {
            return try crypt(encrypt: false, ciphertext, key: key, iv: iv)
        } catch {
            throw DecryptionFailure()
        }
    }

    private enum Failure: Error {
        case decryption
        case openSSL(OpenSSLError)
    }

    private static func crypt(encrypt: Bool, _ input: SecretBytes, key: SecretBytes, iv: SecretBytes) throws(Failure) -> SecretBytes {
        guard let context = EVP_CIPHER_CTX_new() else { throw .openSSL(OpenSSLError("EVP_CIPHER_CTX_new")) }
        defer { EVP_CIPHER_CTX_free(context) }
        var written = 0
        let buffer = SecretBytes(count: input.count + blockSize) { out in
            written =
                key.withUnsafeBytes { key in
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
                } ?? -1
        }
        guard written >= 0 else {
            if encrypt { throw .openSSL(OpenSSLError("EVP_EncryptFinal_ex")) }
            ERR_clear_error()
            throw .decryption
        }
        return buffer.withUnsafeBytes { raw in
            SecretBytes(count: written) { out in if written > 0 { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<written])) } }
        }
    }
}
