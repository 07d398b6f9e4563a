internal import COpenSSL

/// Diffie-Hellman in the 1024-bit MODP group of RFC 2409 (the "Second Oakley Group",
/// generator 2), as the Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7` session uses it.
/// The group is old and small; it is here because that session requires it, not for new uses.
package enum FiniteFieldDiffieHellman {
    /// Bytes of the group's prime, of every public value this side makes, and of the shared secret.
    package static let size = 128

    /// Why an agreement failed.
    package enum Failure: Error {
        /// The peer's value is not in 2...p-2 (0, 1 and p-1 give a shared secret anyone can
        /// guess; anything at or above p is no group element), or longer than any element.
        case notAGroupElement
        case openSSL(OpenSSLError)
    }

    /// Agrees with a peer whose public value is `peerPublic` (big-endian), with a fresh private
    /// exponent in 2...p-2.
    /// - Returns: this side's public value and the shared secret, each ``size`` bytes, big-endian.
    package static func agree(peerPublic: SecretBytes) throws(Failure) -> (publicValue: [UInt8], sharedSecret: SecretBytes) {
        guard peerPublic.count <= 2 * size else { throw .notAGroupElement }
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
            throw .openSSL(OpenSSLError("BN_new"))
        }
        peerPublic.withUnsafeBytes { raw in
            _ = BN_bin2bn(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(raw.count), theirs)
        }
        guard BN_copy(upper, prime) != nil, BN_sub_word(upper, 1) == 1 else { throw .openSSL(OpenSSLError("BN_sub_word")) }
        guard BN_is_zero(theirs) == 0, BN_is_one(theirs) == 0, BN_cmp(theirs, upper) < 0 else { throw .notAGroupElement }
        guard BN_set_word(generator, 2) == 1, BN_sub_word(upper, 2) == 1, BN_priv_rand_range(exponent, upper) == 1, BN_add_word(exponent, 2) == 1,
            BN_mod_exp_mont_consttime(mine, generator, exponent, prime, context, nil) == 1,
            BN_mod_exp_mont_consttime(shared, theirs, exponent, prime, context, nil) == 1
        else { throw .openSSL(OpenSSLError("BN_mod_exp_mont_consttime")) }
        var publicValue = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(mine, &publicValue, Int32(size)) == Int32(size) else { throw .openSSL(OpenSSLError("BN_bn2binpad")) }
        let secret = SecretBytes(count: size) { out in
            _ = BN_bn2binpad(shared, out.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(size))
        }
        return (publicValue, secret)
    }
}
