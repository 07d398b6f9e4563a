import KeychainCore
internal import KeychainSystem
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
        let pair: (Int32, Int32)
        do { pair = try SystemCall.socketPair() } catch { throw PinentryFailure(description: "no socket for the pinentry: \(error.reason)") }
        var spawn = ProcessSpawn([choice.program], environment: choice.environment)
        spawn.descriptors = [(0, .copy(of: pair.1)), (1, .copy(of: pair.1)), (2, .null(O_WRONLY))]
        // Its own session: the terminal's signals (a ^C meant for the daemon) do not reach the
        // dialog, nor its to the daemon; and none of the daemon's signal settings reach it.
        spawn.newSession = true
        spawn.signalDefaults = .all
        let started = Result { () throws(Errno) in try spawn.start() }
        SystemCall.close(pair.1)
        switch started {
        case .success(let child):
            pid = child
            socket = pair.0
        case .failure(let error):
            SystemCall.close(pair.0)
            throw PinentryFailure(description: "\(choice.program) could not be started: \(error.reason)")
        }
    }

    deinit {
        terminate()
        reap()
        SystemCall.close(socket)
    }

    /// Ends the pinentry and its process group now (SIGKILL), unless it has been waited for already.
    func terminate() {
        reaped.withLock { done in
            if !done {
                try? SystemCall.kill(-pid, SIGKILL)
                try? SystemCall.kill(pid, SIGKILL)
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
                    do throws(Errno) {
                        if try SystemCall.hasEnded(pid) {
                            try? SystemCall.kill(-pid, SIGKILL)
                            _ = try? SystemCall.waitpid(pid)
                            done = true
                        }
                    } catch  where error.code == ECHILD {
                        done = true
                    } catch {}
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
            let written = bytes.withUnsafeBytes { all in
                Result { () throws(Errno) in try SystemCall.send(socket, UnsafeRawBufferPointer(rebasing: all[offset...])) }
            }
            switch written {
            case .success(let count) where count > 0: offset += count
            case .success: throw PinentryFailure(description: "the pinentry stopped reading")
            case .failure(let error): throw PinentryFailure(description: "the pinentry stopped reading (\(error.reason))")
            }
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
            var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
            let ready: Int
            do { ready = try SystemCall.poll(&descriptors, milliseconds: Int32(clamping: milliseconds)) } catch {
                throw PinentryFailure(description: "waiting on the pinentry failed: \(error.reason)")
            }
            if ready == 0 { continue }
            let got = (try? SystemCall.recv(socket, into: UnsafeMutableRawBufferPointer(rebasing: buffer[count..<count + 1]))) ?? 0
            guard got > 0 else { throw PinentryFailure(description: "the pinentry ended without an answer") }
            if buffer[count] == UInt8(ascii: "\n") {
                return try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            }
            count += 1
            guard count < AssuanCoding.lineLimit else { throw PinentryFailure(description: "the pinentry sent a line longer than Assuan allows") }
        }
    }
}
