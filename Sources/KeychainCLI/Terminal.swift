import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Standard streams and the controlling terminal: where secrets come in and results go out.
/// Secrets are read straight into ``SecretBytes`` and never echoed.
struct Terminal {
    static let maximumSecretSize = (1 << 20) + 2

    /// The standard descriptors that were closed when the process started (see
    /// ``guardStandardDescriptors()``): writing output to one of them is a failure.
    nonisolated(unsafe) private(set) static var closedAtStart: Set<Int32> = []

    /// Opens /dev/null on every standard descriptor (0, 1, 2) that is closed, so that no file
    /// the process opens later (the vault!) becomes its standard output, and remembers which
    /// were closed. Call once, first thing.
    static func guardStandardDescriptors() {
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where !SystemCall.isOpen(fd) {
            closedAtStart.insert(fd)
            try? SystemCall.openStandard(fd, "/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY)
        }
    }

    var stdinIsTerminal: Bool { SystemCall.isTerminal(STDIN_FILENO) }

    /// Writes to standard output.
    /// - Throws: a failure (exit 4) when the output cannot be written: closed, full, a broken pipe.
    func write(_ text: String) throws(CommandFailure) {
        let bytes = Array(text.utf8)
        if let failure = bytes.withUnsafeBytes({ writeOutput($0) }) { throw failure }
    }

    func write(_ secret: SecretBytes) throws(CommandFailure) {
        if let failure = secret.withUnsafeBytes({ writeOutput($0) }) { throw failure }
    }

    /// Writes a message to standard error; there is nowhere left to report a failure of that.
    func writeError(_ text: String) {
        try? SystemCall.writeAll(STDERR_FILENO, text)
    }

    /// Nil when every byte was written.
    private func writeOutput(_ bytes: UnsafeRawBufferPointer) -> CommandFailure? {
        if Self.closedAtStart.contains(STDOUT_FILENO) {
            return CommandFailure("cannot write the output: standard output is closed", code: .failure)
        }
        do { try SystemCall.writeAll(STDOUT_FILENO, bytes) } catch {
            return CommandFailure("cannot write the output: \(error.reason)", code: .failure)
        }
        return nil
    }

    /// All of standard input: the largest value a vault accepts, and room for the newline
    /// that ends a line of text. More than that is refused, never cut.
    func readStandardInput() throws(CommandFailure) -> SecretBytes {
        try readAll(STDIN_FILENO, limit: Self.maximumSecretSize, what: "standard input")
    }

    /// Asks a yes-or-no question on the controlling terminal; true only for an answer that
    /// begins with y or Y, false for anything else and when there is no terminal to ask on.
    func confirm(_ question: String) -> Bool {
        guard let fd = try? SystemCall.open("/dev/tty", O_RDWR | O_NOCTTY) else { return false }
        defer { SystemCall.close(fd) }
        try? SystemCall.writeAll(fd, question)
        var first: UInt8?
        while let byte = TerminalInput.readLineByte(fd) { if first == nil { first = byte } }
        return first == UInt8(ascii: "y") || first == UInt8(ascii: "Y")
    }

    /// Asks on the controlling terminal with echo off; nil when there is no terminal.
    /// - Throws: a usage failure for a line too long to be a passphrase (never cut).
    func prompt(_ message: String) throws(CommandFailure) -> SecretBytes? {
        do { return try TerminalInput.readSecret(prompt: message) } catch { throw CommandFailure(error.description, code: .usage) }
    }

    /// Every byte of `fd`, at most `limit` of them: one more is a usage failure, so that an
    /// oversized input is refused rather than silently cut.
    func readAll(_ fd: Int32, limit: Int, what: String) throws(CommandFailure) -> SecretBytes {
        do {
            return try FileSystem.readAll(fd: fd, limit: limit, path: what)
        } catch {
            if error.limit != nil {
                throw CommandFailure("\(what) holds more than the \(limit)-byte limit (a value of at most 1 MiB and its final newline); nothing was stored", code: .usage)
            }
            throw CommandFailure("cannot read \(what): \(error.reason)", code: .failure)
        }
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
