internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal state to put back if a signal ends the process during a prompt (read by the
/// signal handler; set and cleared around each prompt).
nonisolated(unsafe) private var promptTerminal: (fd: Int32, state: termios)?

/// Puts the terminal's echo back, then lets the signal do what it would have done.
private func restoreTerminalAndResignal(_ signal: Int32) {
    if let saved = promptTerminal {
        var state = saved.state
        tcsetattr(saved.fd, TCSANOW, &state)
    }
    Glibc.signal(signal, SIG_DFL)
    raise(signal)
}

/// Secrets typed on the controlling terminal: read with echo off straight into ``SecretBytes``.
package enum TerminalInput {
    /// The longest line a prompt accepts; a longer one is refused, never cut.
    package static let maximumLineLength = 4096

    /// The signals that end a process at a prompt (Ctrl-C, Ctrl-\\, a closed terminal, kill).
    private static let endingSignals: [Int32] = [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP]

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
        var original = termios()
        let isTTY = tcgetattr(fd, &original) == 0
        var previous: [Int32: sigaction] = [:]
        if isTTY {
            promptTerminal = (fd, original)
            for signal in endingSignals {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { restoreTerminalAndResignal($0) }
                sigemptyset(&action.sa_mask)
                var old = sigaction()
                sigaction(signal, &action, &old)
                previous[signal] = old
            }
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &silent)
        }
        defer {
            if isTTY {
                tcsetattr(fd, TCSAFLUSH, &original)
                for (signal, var old) in previous { sigaction(signal, &old, nil) }
                promptTerminal = nil
            }
        }
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

    /// The next byte of a line typed on `fd`: nil at its end (a newline or carriage return),
    /// at the end of the input and on an error.
    package static func readLineByte(_ fd: Int32) -> UInt8? {
        var byte: UInt8 = 0
        let n = withUnsafeMutableBytes(of: &byte) { (buffer) in (try? SystemCall.read(fd, into: buffer)) ?? 0 }
        guard n == 1, byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else { return nil }
        return byte
    }
}
