#if canImport(Glibc)
import Glibc
#endif

/// Secrets typed on the controlling terminal: read with echo off straight into ``SecretBytes``.
public enum TerminalInput {
    /// Writes `prompt` to `/dev/tty` and reads one line with echo off (without its newline).
    /// Nil when the process has no controlling terminal.
    public static func readSecret(prompt: String) -> SecretBytes? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var original = termios()
        let isTTY = tcgetattr(fd, &original) == 0
        if isTTY {
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &silent)
        }
        defer {
            if isTTY { tcsetattr(fd, TCSAFLUSH, &original) }
        }
        Array(prompt.utf8).withUnsafeBytes { writeAll(fd, $0) }
        var line = [UInt8](repeating: 0, count: 4096)
        defer { line.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        var count = 0
        var byte: UInt8 = 0
        while count < line.count {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
            line[count] = byte
            count += 1
        }
        byte = 0
        Array("\n".utf8).withUnsafeBytes { writeAll(fd, $0) }
        return SecretBytes(line[0..<count])
    }

    /// Writes all of `bytes` to `fd`, retrying after signals; stops quietly on an error.
    /// Writes every byte, retrying after signals; false (with `errno` set) when a write
    /// failed: a closed descriptor, a full disk, a closed pipe.
    @discardableResult
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
