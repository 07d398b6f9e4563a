internal import COpenSSL

/// HMAC-SHA256 and SHA-256 through OpenSSL.
enum Digest {
    static let size = 32

    static func hmacSHA256(key: SecretBytes, message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var outLength: UInt32 = 0
        let result = key.withUnsafeBytes { k in
            message.withUnsafeBufferPointer { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress ?? UnsafePointer(bitPattern: 1), m.count, &out, &outLength)
            }
        }
        // HMAC with a built-in digest fails only on allocation failure.
        precondition(result != nil && outLength == UInt32(size), "HMAC-SHA256 failed")
        return out
    }

    static func sha256(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        _ = SHA256(message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count, &out)
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
}
