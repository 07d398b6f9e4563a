import FoundationEssentials
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Standard streams and the controlling terminal: where secrets come in and results go out.
/// Secrets are read straight into ``SecretBytes`` and never echoed.
struct Terminal {
    static let maximumSecretSize = (1 << 20) + 1

    var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    func write(_ text: String) { writeAll(STDOUT_FILENO, Array(text.utf8)) }
    func writeError(_ text: String) { writeAll(STDERR_FILENO, Array(text.utf8)) }
    func write(_ secret: SecretBytes) {
        secret.withUnsafeBytes { bytes in writeAll(STDOUT_FILENO, bytes) }
    }

    /// All of standard input, up to the largest value a vault accepts (plus one byte, so that
    /// an oversized secret is reported as such rather than silently cut).
    func readStandardInput() throws(CommandFailure) -> SecretBytes {
        try readAll(STDIN_FILENO, limit: Self.maximumSecretSize, what: "standard input")
    }

    /// Asks on the controlling terminal with echo off; nil when there is no terminal.
    func prompt(_ message: String) -> SecretBytes? {
        TerminalInput.readSecret(prompt: message)
    }

    func readAll(_ fd: Int32, limit: Int, what: String) throws(CommandFailure) -> SecretBytes {
        var buffer = [UInt8](repeating: 0, count: limit)
        defer { buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        var total = 0
        while total < limit {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, limit - total) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CommandFailure("cannot read \(what): \(String(cString: strerror(errno)))", code: .failure)
            }
            if n == 0 { break }
            total += n
        }
        return SecretBytes(buffer[0..<total])
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    private func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        TerminalInput.writeAll(fd, bytes)
    }
}

extension SecretBytes {
    /// The bytes without one trailing newline (`\n` or `\r\n`), as text input usually ends.
    func droppingTrailingNewline() -> SecretBytes {
        withUnsafeBytes { bytes in
            var end = bytes.count
            if end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
            if end > 0 && end < bytes.count && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            return end == bytes.count ? self : SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        }
    }
}
