internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Secrets typed on the controlling terminal: read with echo off straight into ``SecretBytes``.
package enum TerminalInput {
    /// The longest line a prompt accepts; a longer one is refused, never cut.
    package static let maximumLineLength = 4096

    /// Whether the process has a controlling terminal to prompt on (`/dev/tty` opens).
    package static var hasControllingTerminal: Bool {
        guard let fd = try? SystemCall.open("/dev/tty", O_RDWR | O_NOCTTY) else { return false }
        SystemCall.close(fd)
        return true
    }

    /// Writes `prompt` to `/dev/tty` and reads one line with echo off (without its newline).
    /// Echo comes back on every way out: return, error, and a signal that ends the process.
    /// - Returns: nil when the process has no controlling terminal.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for a line over ``maximumLineLength`` bytes.
    package static func readSecret(prompt: String) throws(StoreError) -> SecretBytes? {
        guard let fd = try? SystemCall.open("/dev/tty", O_RDWR | O_NOCTTY) else { return nil }
        defer { SystemCall.close(fd) }
        return try TerminalEcho.withEchoOff(fd) { () throws(StoreError) -> SecretBytes in
            try? SystemCall.writeAll(fd, prompt)
            var line = [UInt8](repeating: 0, count: maximumLineLength)
            defer { line.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
            var count = 0
            var tooLong = false
            while let byte = readLineByte(fd) {
                if count < line.count { line[count] = byte; count += 1 } else { tooLong = true }
            }
            try? SystemCall.writeAll(fd, "\n")
            if tooLong { throw .invalidArgument("what was typed is longer than \(maximumLineLength) bytes; nothing was used") }
            return SecretBytes(line[0..<count])
        }
    }

    /// The next byte of a line typed on `fd`: nil at its end (a newline or carriage return),
    /// at the end of the input and on an error.
    package static func readLineByte(_ fd: Int32) -> UInt8? {
        var byte: UInt8 = 0
        let n = withUnsafeMutableBytes(of: &byte) { (buffer) in (try? SystemCall.read(fd, into: buffer)) ?? 0 }
        guard n == 1, byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else { return nil }
        return byte
    }
}
