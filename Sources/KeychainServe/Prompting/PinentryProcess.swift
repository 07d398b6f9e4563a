import KeychainCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why a pinentry conversation broke off: the program could not be started or misbehaved (died,
/// said something that is not Assuan, did not answer in time). The words never hold what the
/// user typed.
struct PinentryFailure: Error, CustomStringConvertible {
    let description: String
}

/// A running pinentry: its process, and its standard input and output as one socket (a
/// socket, not two pipes, so that writing to a pinentry that died is an error, never a
/// SIGPIPE that would end the daemon).
///
/// The conversation runs on one thread; ``terminate()`` may come from any other, and ends it:
/// the conversation's next read sees the end of the stream.
///
/// The pinentry leads a process group of its own (it starts a session), and the group ends
/// with it: what it started (a helper, a shell, a program a wrapper script ran) is killed when
/// it is dismissed, and when it exits, before it is waited for (while its id still names
/// the group, so that no other process can be signalled).
final class PinentryProcess: Sendable {
    let pid: pid_t
    private let socket: Int32
    /// Whether the process has been waited for: after that its pid may name another process,
    /// which ``terminate()`` must never signal.
    private let reaped = Mutex(false)

    /// Starts `choice`'s program with no arguments (nothing reaches its command line), in a
    /// session of its own, with standard error discarded.
    /// - Throws: ``PinentryFailure`` when it cannot be started.
    init(_ choice: PinentryChoice) throws(PinentryFailure) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw PinentryFailure(description: "no socket for the pinentry: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
        posix_spawn_file_actions_adddup2(&actions, pair[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), defaults = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&defaults)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // POSIX_SPAWN_SETSID (glibc 2.26), which Glibc's module does not export: the terminal's
        // signals (a ^C meant for the daemon) do not reach the dialog, nor its to the daemon.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | 0x80))
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(choice.program), nil]
        let envp: [UnsafeMutablePointer<CChar>?] = choice.environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, choice.program, &actions, &attributes, argv, envp)
        close(pair[1])
        guard spawned == 0 else {
            close(pair[0])
            throw PinentryFailure(description: "\(choice.program) could not be started: \(String(cString: strerror(spawned)))")
        }
        pid = child
        socket = pair[0]
    }

    deinit {
        terminate()
        reap()
        close(socket)
    }

    /// Ends the pinentry and its process group now (SIGKILL), unless it has been waited for already.
    func terminate() {
        reaped.withLock { done in
            if !done {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
            }
        }
    }

    /// Waits for the process to exit, killing it when it has not within a second of being
    /// told goodbye.
    func reap() {
        for attempt in 0..<200 {
            let gone = reaped.withLock { (done: inout Bool) -> Bool in
                if !done {
                    // Exited but not yet waited for: its group's other members end now, then it is.
                    var info = siginfo_t()
                    let seen = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
                    if seen == 0 && info._sifields._sigchld.si_pid == pid {
                        kill(-pid, SIGKILL)
                        var status: Int32 = 0
                        _ = waitpid(pid, &status, 0)
                        done = true
                    } else if seen < 0 && errno == ECHILD {
                        done = true
                    }
                }
                return done
            }
            if gone { return }
            if attempt == 100 { terminate() }
            usleep(10_000)
        }
    }

    // MARK: - Lines

    /// Sends one line (the LF is added); its escaping is the caller's.
    func send(_ line: String) throws(PinentryFailure) {
        let bytes = Array(line.utf8) + [UInt8(ascii: "\n")]
        guard bytes.count <= AssuanCoding.lineLimit else { throw PinentryFailure(description: "a line for the pinentry is too long") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw PinentryFailure(description: "the pinentry stopped reading (\(String(cString: strerror(errno))))") }
            offset += written
        }
    }

    /// The pinentry's answer to a command: its data lines (a passphrase, wiped when dropped),
    /// then `OK` or `ERR`, whichever comes by `deadline`.
    enum Answer {
        case ok(data: SecretBytes?)
        case error(code: UInt32, message: String)
    }

    /// Reads lines until `OK` or `ERR`: status (`S`) and comment (`#`) lines are skipped, data
    /// lines (`D`) kept; anything else is not Assuan.
    /// - Throws: ``PinentryFailure`` for a pinentry that ended, sent garbage, or said nothing
    ///   by `deadline`.
    func answer(by deadline: ContinuousClock.Instant) throws(PinentryFailure) -> Answer {
        var data: SecretBytes?
        while true {
            let verdict = try line(by: deadline) { (line) throws(PinentryFailure) -> Answer? in
                if line.count >= 2, line[0] == UInt8(ascii: "O"), line[1] == UInt8(ascii: "K"), line.count == 2 || line[2] == UInt8(ascii: " ") {
                    return .ok(data: data)
                }
                if line.count >= 3, line[0] == UInt8(ascii: "E"), line[1] == UInt8(ascii: "R"), line[2] == UInt8(ascii: "R") {
                    let rest = line.count > 4 ? String(decoding: UnsafeRawBufferPointer(rebasing: line[4...]), as: UTF8.self) : ""
                    let words = rest.split(separator: " ", maxSplits: 1)
                    return .error(code: words.first.flatMap { UInt32($0) } ?? 0, message: words.count > 1 ? String(words[1]) : "")
                }
                if line.count >= 2, line[0] == UInt8(ascii: "D"), line[1] == UInt8(ascii: " ") {
                    // One data line carries the passphrase: a second is not what GETPIN sends.
                    guard data == nil, let decoded = AssuanCoding.decode(UnsafeRawBufferPointer(rebasing: line[2...])) else {
                        throw PinentryFailure(description: "the pinentry sent data that is not Assuan")
                    }
                    data = decoded
                    return nil
                }
                if line.count >= 1, line[0] == UInt8(ascii: "#") || (line[0] == UInt8(ascii: "S") && (line.count == 1 || line[1] == UInt8(ascii: " "))) {
                    return nil
                }
                throw PinentryFailure(description: "the pinentry said something that is not Assuan")
            }
            if let verdict { return verdict }
        }
    }

    /// Reads one line into a buffer wiped afterwards (a data line holds the passphrase: the
    /// buffer is a ``SecretBytes``'s) and hands it to `body` without its LF.
    private func line<R>(
        by deadline: ContinuousClock.Instant, _ body: (UnsafeMutableRawBufferPointer) throws(PinentryFailure) -> R
    ) throws(PinentryFailure) -> R {
        var result: R?
        _ = try SecretBytes(count: AssuanCoding.lineLimit) { (buffer: UnsafeMutableRawBufferPointer) throws(PinentryFailure) in
            result = try line(into: buffer, by: deadline, body)
        }
        return result!
    }

    private func line<R>(
        into buffer: UnsafeMutableRawBufferPointer, by deadline: ContinuousClock.Instant, _ body: (UnsafeMutableRawBufferPointer) throws(PinentryFailure) -> R
    ) throws(PinentryFailure) -> R {
        var count = 0
        while true {
            // One byte at a time: a line's end is never read past, so nothing of the next line
            // (a passphrase) waits in a buffer of its own.
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw PinentryFailure(description: "the pinentry did not answer in time") }
            let milliseconds = left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: milliseconds))
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw PinentryFailure(description: "waiting on the pinentry failed: \(String(cString: strerror(errno)))") }
            if ready == 0 { continue }
            let got = recv(socket, buffer.baseAddress! + count, 1, 0)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw PinentryFailure(description: "the pinentry ended without an answer") }
            if buffer[count] == UInt8(ascii: "\n") {
                return try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            }
            count += 1
            guard count < AssuanCoding.lineLimit else { throw PinentryFailure(description: "the pinentry sent a line longer than Assuan allows") }
        }
    }
}
