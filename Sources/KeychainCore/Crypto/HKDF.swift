internal import COpenSSL

/// HKDF-SHA256 (RFC 5869) through OpenSSL's `EVP_KDF` "HKDF".
///
/// The KDF is fetched once. (The older `EVP_PKEY_HKDF` route builds a key-management and a
/// key-exchange method store besides the KDF one at its first use, work a short-lived command
/// paid for nothing: keychain-bench's `keychain get (fresh process)` row.)
package enum HKDF {
    // Fetched once; an EVP_KDF is immutable and safe to share once fetched.
    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_KDF_fetch(nil, "HKDF", nil)

    static func deriveKey(from inputKey: SecretBytes, salt: [UInt8] = [], info: String, count: Int = 32) throws(OpenSSLError) -> SecretBytes {
        try deriveKey(from: inputKey, salt: salt, info: Array(info.utf8), count: count)
    }

    package static func deriveKey(from inputKey: SecretBytes, salt: [UInt8] = [], info infoBytes: [UInt8], count: Int = 32) throws(OpenSSLError) -> SecretBytes {
        guard let algorithm = Self.algorithm, let context = EVP_KDF_CTX_new(algorithm) else { throw OpenSSLError("EVP_KDF_CTX_new(HKDF)") }
        defer { EVP_KDF_CTX_free(context) }
        // OSSL_PARAM keeps the pointers it is given: every buffer stays alive until the derive.
        return try inputKey.withUnsafeBytes { (key: UnsafeRawBufferPointer) throws(OpenSSLError) -> SecretBytes in
            var salt = salt, info = infoBytes
            var digest = Array("SHA256".utf8CString)
            return try SecretBytes(count: count) { (out: UnsafeMutableRawBufferPointer) throws(OpenSSLError) in
                let derived = digest.withUnsafeMutableBufferPointer { digest in
                    salt.withUnsafeMutableBytes { salt in
                        info.withUnsafeMutableBytes { info in
                            var parameters = [
                                OSSL_PARAM_construct_utf8_string(name("digest"), digest.baseAddress, 0),
                                OSSL_PARAM_construct_octet_string(name("key"), UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                                OSSL_PARAM_construct_octet_string(name("info"), info.baseAddress, info.count),
                            ]
                            // No salt is RFC 5869's zero-filled salt, which OpenSSL applies when none is set.
                            if salt.count > 0 { parameters.append(OSSL_PARAM_construct_octet_string(name("salt"), salt.baseAddress, salt.count)) }
                            parameters.append(OSSL_PARAM_construct_end())
                            return EVP_KDF_derive(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), count, &parameters)
                        }
                    }
                }
                guard derived == 1 else { throw OpenSSLError("EVP_KDF_derive(HKDF)") }
            }
        }
    }

    /// A parameter name that outlives the OSSL_PARAM holding it: a static string's bytes (NUL
    /// terminated) live in the binary, where a String bridged for one call would be freed
    /// before OpenSSL reads it.
    private static func name(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
