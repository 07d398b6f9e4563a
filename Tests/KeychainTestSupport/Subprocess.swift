import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Child processes through posix_spawn, poll and waitpid. Foundation's Process can deadlock in
/// waitUntilExit when tests start processes in parallel (seen: blocked in CFRunLoopRun while the
/// child was already a zombie), so the tests use this instead.
/// POSIX_SPAWN_SETSID (glibc 2.26), which Glibc's module does not export: the child leads a new session.
private let posixSpawnSetsid: Int32 = 0x80

public enum Subprocess {
    /// Runs `executable` to completion with `input` on its standard input; returns its status
    /// (128 + signal if it was killed) and what it wrote.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String], input: Data = Data()) throws -> CommandResult {
        var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0]
        guard makePipe(&stdinPipe), makePipe(&stdoutPipe), makePipe(&stderrPipe) else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        let pid = try spawn(executable, arguments, environment: environment, actions: &actions)
        for fd in [stdinPipe[0], stdoutPipe[1], stderrPipe[1]] { close(fd) }
        let writer = stdinPipe[1]
        DispatchQueue.global().async {
            input.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = write(writer, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0 { if errno == EINTR { continue }; break }
                    offset += n
                }
            }
            close(writer)
        }
        var out = Data(), err = Data()
        var fds = [pollfd(fd: stdoutPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: stderrPipe[0], events: Int16(POLLIN), revents: 0)]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open > 0 {
            if poll(&fds, nfds_t(fds.count), -1) < 0 { if errno == EINTR { continue }; break }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let n = read(fds[index].fd, &buffer, buffer.count)
                if n > 0 {
                    if index == 0 { out.append(contentsOf: buffer[0..<n]) } else { err.append(contentsOf: buffer[0..<n]) }
                } else if n == 0 || errno != EINTR {
                    close(fds[index].fd)
                    fds[index].fd = -1
                    open -= 1
                }
            }
        }
        return CommandResult(status: wait(for: pid), stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }

    /// Starts a long-running process with its output discarded; stop it with `kill` and `wait(for:)`.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        return try spawn(executable, arguments, environment: environment, actions: &actions)
    }

    /// Starts a process whose standard output the caller reads from the returned descriptor
    /// (and closes); standard input and error are /dev/null.
    public static func launchReadingOutput(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (pid: pid_t, stdout: Int32) {
        var stdoutPipe: [Int32] = [0, 0]
        guard makePipe(&stdoutPipe) else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let pid = try spawn(executable, arguments, environment: environment, actions: &actions)
        close(stdoutPipe[1])
        return (pid, stdoutPipe[0])
    }

    /// Everything `fd` yields until end of file, as text.
    public static func readAll(_ fd: Int32) -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The first line `fd` yields (without its newline); nil when the stream ends before one.
    public static func readLine(_ fd: Int32) -> String? {
        var seen = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: seen, as: UTF8.self) }
            seen.append(byte)
        }
    }

    /// Reads `fd` until `text` has appeared or the stream ends; whether it appeared.
    public static func readOutput(_ fd: Int32, until text: String) -> Bool {
        var seen = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            seen.append(contentsOf: buffer[0..<n])
            if String(decoding: seen, as: UTF8.self).contains(text) { return true }
        }
    }

    /// Starts a process whose standard input stays open until the caller closes the returned
    /// descriptor; its standard error goes to `errorFile`.
    public static func launch(_ executable: String, _ arguments: [String], environment: [String: String], errorFile: String) throws -> (pid: pid_t, stdin: Int32) {
        var stdinPipe: [Int32] = [0, 0]
        guard makePipe(&stdinPipe) else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let pid = try spawn(executable, arguments, environment: environment, actions: &actions)
        close(stdinPipe[0])
        return (pid, stdinPipe[1])
    }

    /// Runs `executable` as a session leader whose controlling terminal (and standard input) is
    /// a fresh pseudo-terminal: when the terminal shows `prompt`, types `answer` and Return.
    /// Returns the status, standard output and error, and everything the terminal showed.
    /// `inspect` is given the terminal (its master side) once the child has exited.
    public static func runOnTerminal(
        _ executable: String, _ arguments: [String], environment: [String: String],
        prompt: String, answer: String,
        inspect: ((Int32) -> Void)? = nil
    ) throws -> (result: CommandResult, terminal: String) {
        try runOnTerminal(executable, arguments, environment: environment, dialogue: [(prompt, answer)], inspect: inspect)
    }

    /// As above, answering each prompt of `dialogue` in turn as it appears on the terminal.
    public static func runOnTerminal(
        _ executable: String, _ arguments: [String], environment: [String: String],
        dialogue: [(prompt: String, answer: String)],
        inspect: ((Int32) -> Void)? = nil
    ) throws -> (result: CommandResult, terminal: String) {
        // posix_openpt/unlockpt/ptsname in their Linux form (Glibc's Swift module hides the
        // XSI names): open the multiplexer, unlock the slave, ask its number.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw POSIXError(.ENOTTY) }
        defer { close(master) }
        var unlock: Int32 = 0, number: UInt32 = 0
        // TIOCSPTLCK = _IOW('T', 0x31, int), TIOCGPTN = _IOR('T', 0x30, unsigned int): not exported to Swift.
        guard ioctl(master, UInt(0x4004_5431), &unlock) == 0, ioctl(master, UInt(0x8004_5430), &number) == 0 else { throw POSIXError(.ENOTTY) }
        let name = "/dev/pts/\(number)"
        var stdoutPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0]
        guard makePipe(&stdoutPipe), makePipe(&stderrPipe) else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Opened after setsid() (glibc applies attributes before file actions), without
        // O_NOCTTY: the terminal becomes the child's controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, name, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        let pid = try spawn(executable, arguments, environment: environment, actions: &actions, newSession: true)
        for fd in [stdoutPipe[1], stderrPipe[1]] { close(fd) }
        var out = Data(), err = Data(), shown = Data()
        var answered = 0
        var searchedUpTo = 0
        var fds = [
            pollfd(fd: stdoutPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: stderrPipe[0], events: Int16(POLLIN), revents: 0),
            pollfd(fd: master, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(30)
        while fds[0].fd >= 0 || fds[1].fd >= 0, Date() < deadline {
            if poll(&fds, nfds_t(fds.count), 200) < 0 { if errno == EINTR { continue }; break }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let n = read(fds[index].fd, &buffer, buffer.count)
                if n > 0 {
                    switch index {
                    case 0: out.append(contentsOf: buffer[0..<n])
                    case 1: err.append(contentsOf: buffer[0..<n])
                    default: shown.append(contentsOf: buffer[0..<n])
                    }
                } else if n == 0 || errno != EINTR {
                    if index < 2 { close(fds[index].fd) }
                    fds[index].fd = -1  // the terminal reports EIO once the child has closed it
                }
            }
            // Each prompt is looked for in what the terminal showed since the previous answer.
            if answered < dialogue.count, String(decoding: shown[searchedUpTo...], as: UTF8.self).contains(dialogue[answered].prompt) {
                searchedUpTo = shown.count
                let line = Array((dialogue[answered].answer + "\n").utf8)
                answered += 1
                _ = line.withUnsafeBytes { write(master, $0.baseAddress!, $0.count) }
            }
        }
        if fds[0].fd >= 0 || fds[1].fd >= 0 { kill(pid, SIGKILL) }
        for fd in fds.prefix(2) where fd.fd >= 0 { close(fd.fd) }
        let status = wait(for: pid)
        inspect?(master)
        return (CommandResult(status: status, stdout: out, stderr: String(decoding: err, as: UTF8.self)), String(decoding: shown, as: UTF8.self))
    }

    @discardableResult
    public static func wait(for pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// A pipe whose ends close on exec, so a child started in parallel by another test never
    /// inherits (and holds open) this one's pipes.
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// A child that exits before reading all its input makes the write that feeds it fail
    /// with EPIPE; without this, SIGPIPE would end the whole test process (the flake seen once
    /// in nine runs).
    private static let ignoresBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    private static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String],
        actions: inout posix_spawn_file_actions_t, newSession: Bool = false
    ) throws -> pid_t {
        _ = ignoresBrokenPipes
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        // A sanitizer run's options reach the children it spawns (the `keychain` command, the
        // daemon), whose environments tests otherwise build from nothing: their reports land
        // beside the test process's, not only in an error file a test may never read.
        var environment = environment
        for name in ["TSAN_OPTIONS", "ASAN_OPTIONS"] where environment[name] == nil {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // Children start with no blocked signals and default handlers: a test runs on a
        // Dispatch thread whose mask blocks signals, which posix_spawn would otherwise pass on
        // (a daemon started that way ignores the SIGTERM meant to stop it).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (newSession ? posixSpawnSetsid : 0)))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .ENOENT) }
        return pid
    }
}
