internal import COpenSSL

/// HKDF-SHA256 (RFC 5869) through OpenSSL's `EVP_PKEY_HKDF`.
enum HKDF {
    static func deriveKey(from inputKey: SecretBytes, salt: [UInt8] = [], info: String, count: Int = 32) throws(OpenSSLError) -> SecretBytes {
        try deriveKey(from: inputKey, salt: salt, info: Array(info.utf8), count: count)
    }

    static func deriveKey(from inputKey: SecretBytes, salt: [UInt8] = [], info infoBytes: [UInt8], count: Int = 32) throws(OpenSSLError) -> SecretBytes {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_id(HKDF)") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) == 1 else {
            throw OpenSSLError("HKDF init")
        }
        if !salt.isEmpty {
            guard salt.withUnsafeBufferPointer({ EVP_PKEY_CTX_set1_hkdf_salt(ctx, $0.baseAddress, Int32($0.count)) }) == 1 else {
                throw OpenSSLError("HKDF salt")
            }
        }
        let keyed = inputKey.withUnsafeBytes { k in
            EVP_PKEY_CTX_set1_hkdf_key(ctx, k.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(k.count))
        }
        guard keyed == 1 else { throw OpenSSLError("HKDF key") }
        guard infoBytes.withUnsafeBufferPointer({ EVP_PKEY_CTX_add1_hkdf_info(ctx, $0.baseAddress, Int32($0.count)) }) == 1 else {
            throw OpenSSLError("HKDF info")
        }
        return try SecretBytes(count: count) { (out: UnsafeMutableRawBufferPointer) throws(OpenSSLError) in
            var length = count
            guard EVP_PKEY_derive(ctx, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1, length == count else {
                throw OpenSSLError("EVP_PKEY_derive(HKDF)")
            }
        }
    }
}
