import KeychainCore

/// A random number generator (only the default exists: pass `kSecRandomDefault`).
public typealias SecRandomRef = OpaquePointer

/// The default generator: OpenSSL's, as every key of the vault uses.
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes; returns `errSecSuccess`
/// (or `errSecParam` for a negative count).
@discardableResult
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return errSecParam }
    guard count > 0 else { return errSecSuccess }
    SecretBytes.random(count: count).withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: count) }
    return errSecSuccess
}
