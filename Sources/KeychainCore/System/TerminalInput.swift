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
public enum TerminalInput {
    /// The longest line a prompt accepts; a longer one is refused, never cut.
    public static let maximumLineLength = 4096

    /// The signals that end a process at a prompt (Ctrl-C, Ctrl-\\, a closed terminal, kill).
    private static let endingSignals: [Int32] = [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP]

    /// Whether the process has a controlling terminal to prompt on (`/dev/tty` opens).
    public static var hasControllingTerminal: Bool {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// Writes `prompt` to `/dev/tty` and reads one line with echo off (without its newline).
    /// Echo comes back on every way out: return, error, and a signal that ends the process.
    /// - Returns: nil when the process has no controlling terminal.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for a line over ``maximumLineLength`` bytes.
    public static func readSecret(prompt: String) throws(StoreError) -> SecretBytes? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
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
        _ = Array(prompt.utf8).withUnsafeBytes { writeAll(fd, $0) }
        var line = [UInt8](repeating: 0, count: maximumLineLength)
        defer { line.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        var count = 0
        var byte: UInt8 = 0
        var tooLong = false
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
            if count < line.count { line[count] = byte; count += 1 } else { tooLong = true }
        }
        byte = 0
        _ = Array("\n".utf8).withUnsafeBytes { writeAll(fd, $0) }
        if tooLong { throw .invalidArgument("what was typed is longer than \(maximumLineLength) bytes; nothing was used") }
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
