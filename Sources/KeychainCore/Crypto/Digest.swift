internal import COpenSSL

/// SHA-256 through OpenSSL, and constant-time comparison (HMAC is ``HMACKey``).
enum Digest {
    static let size = 32

    static func sha256(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        // Fails only when OpenSSL itself could not start (vaults check that before use): a
        // digest of zeros would pass for a checksum, so it must never be returned.
        let computed = SHA256(message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count, &out)
        precondition(computed != nil, "OpenSSL's SHA-256 failed: \(OpenSSLConfiguration.initialisationFailure ?? "no reason given")")
        return out
    }

    static func sha256(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { sha256($0) }
    }

    /// Constant-time equality for digests and tags.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }

    /// Lower-case hexadecimal, without Foundation's (slow) String(format:).
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
