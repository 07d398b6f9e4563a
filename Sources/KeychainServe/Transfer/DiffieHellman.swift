import KeychainCore

/// The key agreement of the `dh-ietf1024-sha256-aes128-cbc-pkcs7` session: Diffie-Hellman in
/// the 1024-bit MODP group of RFC 2409 (``FiniteFieldDiffieHellman``), then HKDF-SHA256 (no
/// salt, no info) over the shared secret left-padded to 128 bytes, 16 bytes out.
enum DiffieHellman {
    /// Agrees on a key with a client whose public value is `clientPublic` (big-endian).
    /// - Returns: this side's public value (128 bytes, big-endian) and the AES-128 key.
    /// - Throws: `InvalidArgs` for a public value outside 2...p-2.
    static func agree(clientPublic: SecretBytes) throws(ServiceError) -> (publicValue: [UInt8], key: SecretBytes) {
        let agreed: (publicValue: [UInt8], sharedSecret: SecretBytes)
        do {
            agreed = try FiniteFieldDiffieHellman.agree(peerPublic: clientPublic)
        } catch {
            switch error {
            case .notAGroupElement:
                throw .init(.invalidArgs, "the Diffie-Hellman public value is not an element of the 1024-bit group (RFC 2409, 2 ... p-2)")
            case .openSSL(let failure):
                throw .init(.failed, "the key agreement failed: \(failure)")
            }
        }
        do {
            return (agreed.publicValue, try HKDF.deriveKey(from: agreed.sharedSecret, info: [], count: AESCBC.keySize))
        } catch {
            throw .init(.failed, "HKDF failed: \(error)")
        }
    }
}
