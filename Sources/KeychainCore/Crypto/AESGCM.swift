internal import COpenSSL

/// AES-256-GCM through OpenSSL's EVP interface: a random 96-bit nonce per seal, a 128-bit tag.
///
/// Sealed layout: `nonce (12) || ciphertext || tag (16)`.
enum AESGCM {
    static let keySize = 32
    static let nonceSize = 12
    static let tagSize = 16
    static let overhead = nonceSize + tagSize

    /// A failure to authenticate: wrong key, wrong associated data, or altered bytes.
    struct AuthenticationFailure: Error {}

    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecretBytes, associatedData: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        precondition(key.count == keySize)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw OpenSSLError("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let ok = key.withUnsafeBytes { k in
            EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
        }
        guard ok == 1 else { throw OpenSSLError("EVP_EncryptInit_ex") }
        return try seal(plaintext, context: ctx, associatedData: associatedData)
    }

    /// Seals with a context already keyed for AES-256-GCM encryption; only the nonce is set here.
    static func seal(_ plaintext: UnsafeRawBufferPointer, context ctx: OpaquePointer, associatedData: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: nonceSize + plaintext.count + tagSize)
        var failure: OpenSSLError?
        output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            do throws(OpenSSLError) { try sealInto(out) } catch { failure = error }
        }
        if let failure { throw failure }
        return output

        func sealInto(_ out: UnsafeMutableRawBufferPointer) throws(OpenSSLError) {
            let nonce = UnsafeMutableRawBufferPointer(rebasing: out[0..<nonceSize])
            Random.fill(nonce)
            let base = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var ok = EVP_EncryptInit_ex(ctx, nil, nil, nil, base)
            guard ok == 1 else { throw OpenSSLError("EVP_EncryptInit_ex(nonce)") }
            var length: Int32 = 0
            if !associatedData.isEmpty {
                ok = associatedData.withUnsafeBufferPointer { EVP_EncryptUpdate(ctx, nil, &length, $0.baseAddress, Int32($0.count)) }
                guard ok == 1 else { throw OpenSSLError("EVP_EncryptUpdate(aad)") }
            }
            if plaintext.count > 0 {
                ok = EVP_EncryptUpdate(ctx, base + nonceSize, &length, plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count))
                guard ok == 1 else { throw OpenSSLError("EVP_EncryptUpdate") }
            }
            ok = EVP_EncryptFinal_ex(ctx, base + nonceSize + plaintext.count, &length)
            guard ok == 1 else { throw OpenSSLError("EVP_EncryptFinal_ex") }
            ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), base + nonceSize + plaintext.count)
            guard ok == 1 else { throw OpenSSLError("EVP_CTRL_GCM_GET_TAG") }
        }
    }

    static func seal(_ plaintext: SecretBytes, key: SecretBytes, associatedData: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws(OpenSSLError) in try seal(p, key: key, associatedData: associatedData) }
    }

    /// Opens a sealed box straight into wipeable memory.
    static func open(_ sealed: UnsafeRawBufferPointer, key: SecretBytes, associatedData: [UInt8]) throws(AuthenticationFailure) -> SecretBytes {
        precondition(key.count == keySize)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw AuthenticationFailure() }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let ok = key.withUnsafeBytes { k in
            EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
        }
        guard ok == 1 else { throw AuthenticationFailure() }
        return try open(sealed, context: ctx, associatedData: associatedData)
    }

    /// Opens with a context already keyed for AES-256-GCM decryption; only the nonce is set here.
    static func open(_ sealed: UnsafeRawBufferPointer, context ctx: OpaquePointer, associatedData: [UInt8]) throws(AuthenticationFailure) -> SecretBytes {
        guard sealed.count >= overhead else { throw AuthenticationFailure() }
        return try SecretBytes(count: sealed.count - overhead) { (out: UnsafeMutableRawBufferPointer) throws(AuthenticationFailure) in
            try open(sealed, context: ctx, associatedData: associatedData, into: out)
        }
    }

    /// Opens into `out`, which must hold exactly the plaintext (the sealed count less
    /// ``overhead``). On a failure `out` may hold unauthenticated bytes: wipe or overwrite it.
    static func open(
        _ sealed: UnsafeRawBufferPointer, context ctx: OpaquePointer, associatedData: [UInt8], into out: UnsafeMutableRawBufferPointer
    ) throws(AuthenticationFailure) {
        guard sealed.count >= overhead, out.count == sealed.count - overhead else { throw AuthenticationFailure() }
        let plainCount = out.count
        let input = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var ok = EVP_DecryptInit_ex(ctx, nil, nil, nil, input)
        guard ok == 1 else { throw AuthenticationFailure() }
        var length: Int32 = 0
        if !associatedData.isEmpty {
            ok = associatedData.withUnsafeBufferPointer { EVP_DecryptUpdate(ctx, nil, &length, $0.baseAddress, Int32($0.count)) }
            guard ok == 1 else { throw AuthenticationFailure() }
        }
        var scratch: UInt8 = 0
        let outBase = plainCount > 0 ? out.baseAddress!.assumingMemoryBound(to: UInt8.self) : withUnsafeMutablePointer(to: &scratch) { $0 }
        if plainCount > 0 {
            ok = EVP_DecryptUpdate(ctx, outBase, &length, input + nonceSize, Int32(plainCount))
            guard ok == 1 else { throw AuthenticationFailure() }
        }
        let tag = UnsafeMutableRawPointer(mutating: input + nonceSize + plainCount)
        ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), tag)
        guard ok == 1 else { throw AuthenticationFailure() }
        var finalLength: Int32 = 0
        var finalByte: UInt8 = 0
        guard EVP_DecryptFinal_ex(ctx, &finalByte, &finalLength) == 1 else {
            ERR_clear_error()
            throw AuthenticationFailure()
        }
    }

    static func open(_ sealed: [UInt8], key: SecretBytes, associatedData: [UInt8]) throws(AuthenticationFailure) -> SecretBytes {
        try sealed.withBytes { (s: UnsafeRawBufferPointer) throws(AuthenticationFailure) in try open(s, key: key, associatedData: associatedData) }
    }
}
