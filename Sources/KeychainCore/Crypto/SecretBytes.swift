internal import COpenSSL
import FoundationEssentials

/// Bytes that must not outlive their use: keys, passphrases and decrypted values.
///
/// The buffer lives in OpenSSL's secure heap (`SecureHeap`: locked in memory where the limits
/// allow, and left out of core dumps), falling back to the ordinary heap once that is full; it
/// is wiped when the last reference goes away, compares in constant time, and never prints its
/// contents. Reach the bytes only through
/// ``withUnsafeBytes(_:)``; convert to `Data` or `String` once, as late as possible.
public final class SecretBytes: @unchecked Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    // Immutable after init, so sharing across threads is safe.
    private let storage: UnsafeMutableRawBufferPointer

    /// The number of bytes held.
    public var count: Int { countStored }

    /// Allocates `count` bytes and lets `initializer` fill them in place, so the secret is never
    /// copied through an intermediate buffer.
    public init<E: Error>(count: Int, initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        let buffer = SecureHeap.allocate(max(count, 1))
        do {
            try initializer(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        } catch {
            SecureHeap.free(buffer)
            throw error
        }
        storage = buffer
        countStored = count
    }

    // Set once by init; lowered only by `truncate(to:)`, before the buffer is shared.
    private var countStored: Int

    /// Copies `bytes` into a wipeable buffer.
    public convenience init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        self.init(count: array.count) { buffer in buffer.copyBytes(from: array) }
    }

    /// Copies the UTF-8 bytes of `string`.
    public convenience init(utf8 string: String) {
        var string = string
        let count = string.utf8.count
        self.init(count: count) { buffer in
            string.withUTF8 { utf8 in buffer.copyBytes(from: UnsafeRawBufferPointer(utf8)) }
        }
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    public static func random(count: Int) -> SecretBytes {
        SecretBytes(count: count) { buffer in Random.fill(buffer) }
    }

    deinit {
        SecureHeap.free(storage)
    }

    /// Keeps only the first `count` bytes, wiping the rest: for a buffer just filled and not
    /// yet handed to anyone (an opened value losing its size padding), where a copy would be a
    /// second locked allocation, copy and wipe on every read.
    func truncate(to count: Int) {
        precondition(count >= 0 && count <= countStored, "truncate(to:) cannot grow the bytes")
        if count < countStored { OPENSSL_cleanse(storage.baseAddress! + count, countStored - count) }
        countStored = count
    }

    /// Calls `body` with a view of the bytes, valid only for the duration of the call.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<countStored]))
    }

    /// A copy as `Data`, for handing a secret to code that expects it (the faces do this last).
    public var data: Data { withUnsafeBytes { Data($0) } }

    /// Constant-time comparison (`CRYPTO_memcmp`).
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.count == 0 { return true }
        return lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in CRYPTO_memcmp(l.baseAddress, r.baseAddress, l.count) == 0 } }
    }

    public var description: String { "SecretBytes(\(count) bytes)" }
    public var debugDescription: String { description }
}
