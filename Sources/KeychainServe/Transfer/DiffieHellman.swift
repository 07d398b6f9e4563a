internal import COpenSSL
import KeychainCore

/// The key agreement of the `dh-ietf1024-sha256-aes128-cbc-pkcs7` session: Diffie-Hellman in
/// the 1024-bit MODP group of RFC 2409 (the "Second Oakley Group", generator 2), then
/// HKDF-SHA256 (no salt, no info) over the shared secret left-padded to 128 bytes, 16 bytes out.
enum DiffieHellman {
    /// Bytes of the group's prime, and of every public value this side sends.
    static let size = 128

    /// Agrees on a key with a client whose public value is `clientPublic` (big-endian).
    /// - Returns: this side's public value (``size`` bytes, big-endian) and the AES-128 key.
    /// - Throws: `InvalidArgs` for a public value outside 2...p-2 (0, 1 and p-1 give a shared
    ///   secret anyone can guess; anything at or above p is no group element).
    static func agree(clientPublic: SecretBytes) throws(ServiceError) -> (publicValue: [UInt8], key: SecretBytes) {
        guard clientPublic.count <= 2 * size else { throw malformed }
        let context = BN_CTX_new()
        let prime = BN_get_rfc2409_prime_1024(nil)
        let generator = BN_new(), exponent = BN_new(), mine = BN_new(), theirs = BN_new(), shared = BN_new(), upper = BN_new()
        defer {
            BN_CTX_free(context)
            BN_free(prime)
            BN_free(generator)
            BN_clear_free(exponent)
            BN_free(mine)
            BN_free(theirs)
            BN_clear_free(shared)
            BN_free(upper)
        }
        guard let context, let prime, let generator, let exponent, let mine, let theirs, let shared, let upper else {
            throw ServiceError(.failed, "OpenSSL could not allocate the key agreement")
        }
        clientPublic.withUnsafeBytes { raw in
            _ = BN_bin2bn(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(raw.count), theirs)
        }
        // 1 < theirs < p - 1
        guard BN_copy(upper, prime) != nil, BN_sub_word(upper, 1) == 1 else { throw ServiceError(.failed, "OpenSSL BN_sub_word failed") }
        guard BN_is_zero(theirs) == 0, BN_is_one(theirs) == 0, BN_cmp(theirs, upper) < 0 else { throw malformed }
        // A private exponent in 2...p-2.
        guard BN_set_word(generator, 2) == 1, BN_sub_word(upper, 2) == 1, BN_priv_rand_range(exponent, upper) == 1, BN_add_word(exponent, 2) == 1,
            BN_mod_exp_mont_consttime(mine, generator, exponent, prime, context, nil) == 1,
            BN_mod_exp_mont_consttime(shared, theirs, exponent, prime, context, nil) == 1
        else { throw ServiceError(.failed, "OpenSSL could not complete the key agreement") }
        var publicValue = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(mine, &publicValue, Int32(size)) == Int32(size) else { throw ServiceError(.failed, "OpenSSL BN_bn2binpad failed") }
        let secret = SecretBytes(count: size) { out in
            _ = BN_bn2binpad(shared, out.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(size))
        }
        do {
            return (publicValue, try HKDF.deriveKey(from: secret, info: [], count: 16))
        } catch {
            throw ServiceError(.failed, "HKDF failed: \(error)")
        }
    }

    private static var malformed: ServiceError {
        .init(.invalidArgs, "the Diffie-Hellman public value is not an element of the 1024-bit group (RFC 2409, 2 ... p-2)")
    }
}
