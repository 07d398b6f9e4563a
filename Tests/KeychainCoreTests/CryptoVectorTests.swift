import Foundation
import Testing

@testable import KeychainCore

/// Published test vectors: the wrappers call OpenSSL correctly.
@Suite("Crypto wrappers against published vectors")
struct CryptoVectorTests {
    static func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = s.startIndex
        while index < s.endIndex {
            let next = s.index(index, offsetBy: 2)
            out.append(UInt8(s[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    @Test("HKDF-SHA256, RFC 5869 test cases 1 and 3")
    func hkdf() throws {
        let ikm = SecretBytes(Self.hex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"))
        let case1 = try HKDF.deriveKey(from: ikm, salt: Self.hex("000102030405060708090a0b0c"), info: Self.hex("f0f1f2f3f4f5f6f7f8f9"), count: 42)
        #expect(case1.data == Data(Self.hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")))
        let case3 = try HKDF.deriveKey(from: ikm, info: "", count: 42)
        #expect(case3.data == Data(Self.hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")))
    }

    @Test("X25519, RFC 7748 section 6.1: both sides agree on the published secret; generated pairs agree")
    func x25519() throws {
        let alice = SecretBytes(Self.hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = SecretBytes(Self.hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        let alicePublic = Self.hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        let bobPublic = Self.hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let shared = Data(Self.hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"))
        #expect(try X25519.sharedSecret(privateKey: alice, peerPublicKey: bobPublic).data == shared)
        #expect(try X25519.sharedSecret(privateKey: bob, peerPublicKey: alicePublic).data == shared)
        let (p1, q1) = try X25519.generate(), (p2, q2) = try X25519.generate()
        #expect(try X25519.sharedSecret(privateKey: p1, peerPublicKey: q2) == X25519.sharedSecret(privateKey: p2, peerPublicKey: q1))
        #expect(throws: OpenSSLError.self) { try X25519.sharedSecret(privateKey: p1, peerPublicKey: [UInt8](repeating: 0, count: 32)) }
    }

    @Test("HMAC-SHA256, RFC 4231 test case 2")
    func hmac() {
        let mac = HMACKey(SecretBytes(utf8: "Jefe")).authenticationCode(Array("what do ya want for nothing?".utf8))
        #expect(mac == Self.hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    @Test("scrypt, RFC 7914 vector 3 (N=16384, r=8, p=1)")
    func scrypt() throws {
        let key = try Scrypt.deriveKey(
            passphrase: SecretBytes(utf8: "pleaseletmein"), salt: Array("SodiumChloride".utf8),
            parameters: ScryptParameters(logN: 14, r: 8, p: 1), count: 64)
        #expect(key.data == Data(Self.hex("7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887")))
    }

    @Test("AES-256-GCM opens what it seals, and refuses a wrong key, wrong associated data, or any altered byte")
    func aesGCM() throws {
        let key = SecretBytes.random(count: 32)
        let plaintext = SecretBytes(utf8: "attack at dawn")
        let sealed = try AESGCM.seal(plaintext, key: key, associatedData: [1, 2, 3])
        #expect(sealed.count == plaintext.count + AESGCM.overhead)
        #expect(try AESGCM.open(sealed, key: key, associatedData: [1, 2, 3]) == plaintext)
        #expect(throws: AESGCM.AuthenticationFailure.self) { try AESGCM.open(sealed, key: SecretBytes.random(count: 32), associatedData: [1, 2, 3]) }
        #expect(throws: AESGCM.AuthenticationFailure.self) { try AESGCM.open(sealed, key: key, associatedData: [1, 2, 4]) }
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 1
            #expect(throws: AESGCM.AuthenticationFailure.self) { try AESGCM.open(altered, key: key, associatedData: [1, 2, 3]) }
        }
        #expect(try AESGCM.seal(plaintext, key: key, associatedData: []) != AESGCM.seal(plaintext, key: key, associatedData: []), "nonces are random")
    }

    /// The AES-256 test cases of McGrew and Viega's GCM specification (test cases 13, 14 and
    /// 16): key, nonce, plaintext, associated data, ciphertext, tag.
    static let gcmVectors: [(key: String, nonce: String, plaintext: String, aad: String, ciphertext: String, tag: String)] = [
        (String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"),
        (
            String(repeating: "00", count: 32), String(repeating: "00", count: 12), String(repeating: "00", count: 16), "",
            "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"
        ),
        (
            "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
            "76fc6ece0f4e1768cddf8853bb2d551b"
        ),
    ]

    @Test("AES-256-GCM, the GCM specification's AES-256 test cases: the published ciphertext and tag open to the published plaintext, and a changed tag does not")
    func aesGCMKnownAnswers() throws {
        for vector in Self.gcmVectors {
            let key = SecretBytes(Self.hex(vector.key))
            let sealed = Self.hex(vector.nonce) + Self.hex(vector.ciphertext) + Self.hex(vector.tag)
            #expect(try AESGCM.open(sealed, key: key, associatedData: Self.hex(vector.aad)) == SecretBytes(Self.hex(vector.plaintext)))
            var forged = sealed
            forged[forged.count - 1] ^= 0x80
            #expect(throws: AESGCM.AuthenticationFailure.self) { try AESGCM.open(forged, key: key, associatedData: Self.hex(vector.aad)) }
        }
    }

    @Test("AES-128-CBC, NIST SP 800-38A F.2.1 and F.2.2: the published blocks, a PKCS#7 block after them, and back; a wrong key or a cut is refused")
    func aesCBCVectors() throws {
        let key = SecretBytes(Self.hex("2b7e151628aed2a6abf7158809cf4f3c")), iv = SecretBytes(Self.hex("000102030405060708090a0b0c0d0e0f"))
        let plaintext = SecretBytes(Self.hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"))
        let sealed = try AESCBC.seal(plaintext, key: key, iv: iv)
        let bytes = sealed.withUnsafeBytes { Array($0) }
        #expect(bytes.count == 48)
        #expect(Array(bytes[0..<32]) == Self.hex("7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"))
        #expect(try AESCBC.open(sealed, key: key, iv: iv) == plaintext)
        #expect(throws: AESCBC.DecryptionFailure.self) { try AESCBC.open(sealed, key: SecretBytes(Self.hex("2b7e151628aed2a6abf7158809cf4f3d")), iv: iv) }
        #expect(throws: AESCBC.DecryptionFailure.self) { try AESCBC.open(SecretBytes(Array(bytes[0..<40])), key: key, iv: iv) }
    }

    @Test("RFC 2409 group 2 Diffie-Hellman: against the generator itself the shared secret is this side's public value; values outside 2...p-2 are refused")
    func finiteFieldDiffieHellman() throws {
        let agreed = try FiniteFieldDiffieHellman.agree(peerPublic: SecretBytes([2]))
        #expect(agreed.publicValue.count == 128 && agreed.sharedSecret.count == 128)
        #expect(agreed.sharedSecret == SecretBytes(agreed.publicValue))
        let other = try FiniteFieldDiffieHellman.agree(peerPublic: SecretBytes([2]))
        #expect(other.publicValue != agreed.publicValue, "a fresh exponent each time")
        for value in [[], [0], [1], [UInt8](repeating: 0xFF, count: 128)] {
            #expect(throws: FiniteFieldDiffieHellman.Failure.self) { try FiniteFieldDiffieHellman.agree(peerPublic: SecretBytes(value)) }
        }
    }

    @Test("SecretBytes compares in constant time and never prints its contents")
    func secretBytesHygiene() {
        let a = SecretBytes(utf8: "hunter2")
        #expect(a == SecretBytes(utf8: "hunter2") && a != SecretBytes(utf8: "hunter3"))
        #expect("\(a)" == "SecretBytes(7 bytes)" && String(reflecting: a) == "SecretBytes(7 bytes)")
    }
}
