internal import COpenSSL
import FoundationEssentials
import Synchronization

/// An HMAC-SHA256 key, keyed once (`EVP_MAC_init`) and re-initialised per message with the
/// key it already holds. OpenSSL 3's one-shot `HMAC()` fetches the algorithm on every call,
/// and a duplicated context still allocates; re-initialising the keyed context costs only the
/// hashing (keychain-bench's `string(forKey:)` row measures a lookup, digests included).
final class HMACKey: Sendable {
    /// The keyed context: every digest changes it, so the lock serialises its use.
    private let template: Mutex<OpaquePointer>
    /// The key itself, kept for callers that derive from it.
    let key: SecretBytes

    // Fetched once; an EVP_MAC is immutable and safe to share once fetched.
    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_MAC_fetch(nil, "HMAC", nil)

    private static let digestParameterName = "digest"

    init(_ key: SecretBytes) {
        self.key = key
        guard let algorithm = Self.algorithm, let context = EVP_MAC_CTX_new(algorithm) else {
            fatalError("OpenSSL has no HMAC implementation")
        }
        // OSSL_PARAM keeps the pointers it is given, so both strings must outlive EVP_MAC_init:
        // a temporary bridged from a String literal would be freed before OpenSSL reads it
        // (a use after free that fuzzing under AddressSanitizer found).
        let ok = Self.digestParameterName.withCString { name in
            "SHA256".withCString { digest in
                var parameters = [
                    OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0),
                    OSSL_PARAM_construct_end(),
                ]
                return key.withUnsafeBytes { k in
                    EVP_MAC_init(context, k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count, &parameters)
                }
            }
        }
        // Initialising HMAC-SHA256 with a built-in digest fails only on allocation failure.
        precondition(ok == 1, "EVP_MAC_init(HMAC-SHA256) failed")
        template = Mutex(context)
    }

    deinit { template.withLock { EVP_MAC_CTX_free($0) } }

    func authenticationCode(_ message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Digest.size)
        authenticate(message, into: &out)
        return out
    }

    /// As ``authenticationCode(_:)``, into `out` (``Digest/size`` bytes): a pass that digests
    /// every row of a vault reuses one array.
    func authenticate(_ message: [UInt8], into out: inout [UInt8]) {
        precondition(out.count == Digest.size)
        var length = 0
        // A NULL key re-uses the key the context was initialised with.
        let ok = template.withLock { template in
            message.withUnsafeBufferPointer { m in
                EVP_MAC_init(template, nil, 0, nil) == 1
                    && EVP_MAC_update(template, m.baseAddress, m.count) == 1 && EVP_MAC_final(template, &out, &length, out.count) == 1
            }
        }
        precondition(ok && length == Digest.size, "HMAC-SHA256 failed")
    }
}
