package import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The system layer's bounded reads, into ``SecretBytes``: a file's bytes are held, and wiped,
/// as a secret's are, whatever the file holds.
extension FileSystem {
    package static func readAll(_ path: String, limit: Int) throws(Errno) -> SecretBytes {
        let fd = try SystemCall.open(path, O_RDONLY)
        defer { SystemCall.close(fd) }
        return try readAll(fd: fd, limit: limit, path: path)
    }

    /// Every byte of an open descriptor, at most `limit` of them, read into a buffer wiped
    /// afterwards. More than `limit` is refused (`EFBIG`), never cut.
    package static func readAll(fd: Int32, limit: Int, path: String) throws(Errno) -> SecretBytes {
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        defer { buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        let total = try buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(Errno) in
                var total = 0
                while total < bytes.count {
                    let n = try SystemCall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[total...]), path: path)
                    if n == 0 { break }
                    total += n
                }
                return total
            }
        }.get()
        guard total <= limit else { throw Errno(EFBIG, call: "read", path: path, limit: limit) }
        return SecretBytes(buffer[0..<total])
    }

    /// The text of a small file that is not a secret (a `/proc` or `/run` entry), at most
    /// `limit` bytes of it; more is refused (`EFBIG`), never cut.
    package static func readText(_ path: String, limit: Int = 1 << 16) throws(Errno) -> String {
        try readAll(path, limit: limit).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
