internal import COpenSSL

/// OpenSSL's secure heap (`CRYPTO_secure_malloc_init`): one arena, set up on first use, that
/// OpenSSL maps with guard pages, locks in memory (`mlock`, where `RLIMIT_MEMLOCK` allows) and
/// marks `MADV_DONTDUMP`, so that what is in it never reaches a core dump or swap. Keys,
/// passphrases and decrypted values (``SecretBytes``) live there, and so do OpenSSL's own
/// private keys (X25519), which it allocates there once the heap exists.
///
/// Not covered: the key schedules inside OpenSSL's cipher and MAC contexts, which OpenSSL keeps
/// in its ordinary heap, and what a caller copies out (a `String`, a `Data`).
enum SecureHeap {
    /// 512 KiB: every key and passphrase many times over, and the values a program holds at a
    /// time; beyond it, allocations fall back to the ordinary heap (still wiped on release).
    static let size = 1 << 19
    /// What is always left to OpenSSL, which takes its random generators' state and its private
    /// keys from the same arena once it exists (and fails without it).
    static let reservedForOpenSSL = 1 << 17

    /// Whether the arena exists (it cannot where mmap is refused).
    static let isAvailable: Bool = CRYPTO_secure_malloc_init(size, 16) != 0

    /// Zeroed bytes from the arena, or from the ordinary heap when it is full or missing.
    static func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        if isAvailable, CRYPTO_secure_used() + count <= size - reservedForOpenSSL, let pointer = CRYPTO_secure_zalloc(count, nil, 0) {
            return UnsafeMutableRawBufferPointer(start: pointer, count: count)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return buffer
    }

    /// Whether `pointer` is in the arena (rather than the ordinary heap it falls back to).
    static func contains(_ pointer: UnsafeRawPointer) -> Bool {
        isAvailable && CRYPTO_secure_allocated(pointer) == 1
    }

    /// Wipes and releases what ``allocate(_:)`` gave.
    static func free(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        if contains(base) {
            CRYPTO_secure_clear_free(base, buffer.count, nil, 0)
        } else {
            OPENSSL_cleanse(base, buffer.count)
            buffer.deallocate()
        }
    }
}
