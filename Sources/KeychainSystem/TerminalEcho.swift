#if canImport(Glibc)
    import Glibc
#endif

/// The terminal state to put back if a signal ends the process while echo is off (read by the
/// signal handler; set and cleared around each use of ``TerminalEcho/withEchoOff(_:_:)``).
nonisolated(unsafe) private var silencedTerminal: (fd: Int32, state: termios)?

/// Puts the terminal's echo back, then lets the signal do what it would have done.
private func restoreTerminalAndResignal(_ signal: Int32) {
    if let saved = silencedTerminal {
        var state = saved.state
        tcsetattr(saved.fd, TCSANOW, &state)
    }
    Glibc.signal(signal, SIG_DFL)
    raise(signal)
}

/// A terminal's echo turned off while something is typed, and put back on every way out:
/// return, throw, and a signal that ends the process.
package enum TerminalEcho {
    /// The signals that end a process at a prompt (Ctrl-C, Ctrl-\\, a closed terminal, kill).
    private static let endingSignals: [Int32] = [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP]

    /// Runs `body` with echo off on `fd` when it is a terminal (and as it is when it is not): the
    /// terminal's settings are put back after it, and by a handler of each ending signal
    /// meanwhile, which then lets the signal end the process as it would have.
    package static func withEchoOff<R, E: Error>(_ fd: Int32, _ body: () throws(E) -> R) throws(E) -> R {
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { return try body() }
        silencedTerminal = (fd, original)
        var previous: [Int32: sigaction] = [:]
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
        defer {
            tcsetattr(fd, TCSAFLUSH, &original)
            for (signal, var old) in previous { sigaction(signal, &old, nil) }
            silencedTerminal = nil
        }
        return try body()
    }
}
