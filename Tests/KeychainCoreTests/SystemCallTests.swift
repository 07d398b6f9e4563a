import Dispatch
import Foundation
import KeychainTestSupport
import Synchronization
import Testing

@testable import KeychainCore
@testable import KeychainSystem

/// How many times the test signal's handler ran (a handler cannot capture anything).
private let interruptions = Atomic<Int>(0)

@Suite("System layer: one wrapper per call, EINTR retried, errors that name call and path", .serialized)
struct SystemCallTests {
    let directory = TemporaryDirectory()

    /// Runs `read` on a pipe (or a socket pair) in another thread, interrupts that thread with a signal whose
    /// handler does not ask the kernel to restart calls (no `SA_RESTART`), and returns what the
    /// read returned or threw. `feed` decides whether a byte is written once signals were sent.
    private func interruptedRead(
        feed: Bool, overSocket: Bool = false, _ read: @escaping @Sendable (Int32) throws(Errno) -> Int
    ) -> (Result<Int, Errno>, Int) {
        var ends: [Int32] = [0, 0]
        if overSocket, let pair = try? SystemCall.socketPair() { ends = [pair.0, pair.1] } else { #expect(pipe(&ends) == 0) }
        defer { ends.forEach { _ = close($0) } }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        sigaction(SIGUSR2, &action, &previous)
        defer { sigaction(SIGUSR2, &previous, nil) }
        interruptions.store(0, ordering: .relaxed)

        let reader = Mutex<pthread_t?>(nil)
        let outcome = Mutex<Result<Int, Errno>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let readEnd = ends[0]
        DispatchQueue.global().async {
            // Dispatch's threads block most signals: this one takes the test's while it reads.
            var unblocked = sigset_t()
            var mask = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, &mask)
            defer { pthread_sigmask(SIG_SETMASK, &mask, nil) }
            reader.withLock { $0 = pthread_self() }
            let result = Result { () throws(Errno) in try read(readEnd) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        while reader.withLock({ $0 }) == nil { usleep(1_000) }
        let thread = reader.withLock { $0! }
        // Several signals, each while the reader sits in read(2): without a retry the first
        // one ends the read with EINTR.
        for _ in 0..<5 where outcome.withLock({ $0 }) == nil {
            usleep(40_000)
            pthread_kill(thread, SIGUSR2)
        }
        usleep(40_000)
        if feed {
            var byte: UInt8 = 7
            #expect(write(ends[1], &byte, 1) == 1)
        }
        // Ends the read of a reader still waiting after the signals (a test that failed).
        if done.wait(timeout: .now() + 2) == .timedOut {
            _ = close(ends[1])
            ends[1] = -1
            done.wait()
        }
        return (outcome.withLock { $0! }, interruptions.load(ordering: .relaxed))
    }

    @Test("a signal interrupting read(2) does not end it: the read is retried and returns the data")
    func readInterruptedBySignalIsRetried() throws {
        let (result, signals) = interruptedRead(feed: true) { (fd) throws(Errno) in
            var byte: UInt8 = 0
            return try withUnsafeMutableBytes(of: &byte) { buffer in
                Result { () throws(Errno) in try SystemCall.read(fd, into: buffer, path: "test pipe") }
            }.get() == 1 ? Int(byte) : -1
        }
        #expect(signals >= 1)
        #expect(try result.get() == 7)
    }

    @Test("the same signal does end a read that is not retried (so the test above proves the retry)")
    func readInterruptedBySignalWithoutRetryFails() {
        let (result, signals) = interruptedRead(feed: false) { (fd) throws(Errno) in
            var byte: UInt8 = 0
            return try SystemCall.valueOrErrno("read", path: "test pipe", retryOnInterrupt: false) { Glibc.read(fd, &byte, 1) }
        }
        #expect(signals >= 1)
        guard case .failure(let error) = result else {
            Issue.record("the read was not interrupted: \(result)")
            return
        }
        #expect(error.code == EINTR)
        #expect(error.call == "read")
    }

    @Test("an Errno's description names the call, the path and the C library's reason")
    func errnoDescriptionNamesCallAndPath() {
        let missing = directory.path + "/no such directory/vault.keychain"
        #expect(throws: Errno.self) { _ = try SystemCall.open(missing, O_RDONLY) }
        do {
            _ = try SystemCall.open(missing, O_RDONLY)
        } catch {
            #expect(error.code == ENOENT)
            #expect(error.call == "open")
            #expect(error.path == missing)
            #expect(error.description == "open \(missing): No such file or directory")
        }
        #expect(Errno(EACCES, call: "mkdir", path: "/a/b").description == "mkdir /a/b: Permission denied")
        #expect(Errno(EBADF, call: "close").description == "close: Bad file descriptor")
    }

    @Test("realpath resolves a directory reached through a link, and names the call and path when there is none")
    func realpathResolvesLinksAndNamesFailures() throws {
        let real = directory.path + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link", withDestinationPath: real)
        let resolvedRoot = try SystemCall.realpath(directory.path)
        #expect(try SystemCall.realpath(directory.path + "/link/./") == resolvedRoot + "/real")
        let missing = directory.path + "/link/absent"
        #expect {
            _ = try SystemCall.realpath(missing)
        } throws: { error in
            (error as? Errno).map { $0.code == ENOENT && $0.call == "realpath" && $0.path == missing } ?? false
        }
    }

    @Test("a failed write's error names the call and path, never the bytes it was given")
    func errnoNeverCarriesTheData() {
        let secret = SecretBytes(Array("correct horse battery staple".utf8))
        do {
            try secret.withUnsafeBytes { (bytes) throws(Errno) in try SystemCall.writeAll(-1, bytes, path: "the key file") }
            Issue.record("a write to no descriptor succeeded")
        } catch {
            #expect(error.code == EBADF)
            #expect(error.description == "write the key file: Bad file descriptor")
            #expect(!error.description.contains("horse"))
        }
    }

    @Test("a bounded read refuses more than its limit with EFBIG and says the limit")
    func boundedReadNamesItsLimit() throws {
        let file = directory.path + "/input"
        try Data(repeating: 1, count: 11).write(to: URL(fileURLWithPath: file))
        #expect(try FileSystem.readAll(file, limit: 11).count == 11)
        do {
            _ = try FileSystem.readAll(file, limit: 10)
            Issue.record("an input over the limit was read")
        } catch {
            #expect(error.code == EFBIG)
            #expect(error.description == "read \(file): it holds more than the 10-byte limit (nothing of it was used)")
        }
    }

    @Test("a signal interrupting poll(2) does not end the wait: poll is made again and sees the data")
    func pollInterruptedBySignalIsRetried() throws {
        let (result, signals) = interruptedRead(feed: true) { (fd) throws(Errno) in
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            return try SystemCall.poll(&descriptors, milliseconds: 5_000)
        }
        #expect(signals >= 1)
        #expect(try result.get() == 1)
    }

    @Test("a poll(2) interrupted by signals still ends at its timeout, with nothing ready, not with EINTR")
    func pollInterruptedBySignalKeepsItsTimeout() throws {
        let (result, signals) = interruptedRead(feed: false) { (fd) throws(Errno) in
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            return try SystemCall.poll(&descriptors, milliseconds: 600)
        }
        #expect(signals >= 1)
        #expect(try result.get() == 0)
    }

    @Test("a signal interrupting recv(2) does not end it: the receive is retried and returns the data")
    func recvInterruptedBySignalIsRetried() throws {
        let (result, signals) = interruptedRead(feed: true, overSocket: true) { (fd) throws(Errno) in
            var byte: UInt8 = 0
            let count = try withUnsafeMutableBytes(of: &byte) { buffer in Result { () throws(Errno) in try SystemCall.recv(fd, into: buffer) } }.get()
            return count == 1 ? Int(byte) : -1
        }
        #expect(signals >= 1)
        #expect(try result.get() == 7)
    }

    @Test("a spawned program gets the descriptors, environment, directory and session asked for")
    func spawnedProgramGetsWhatWasAsked() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { SystemCall.close(ends[0]) }
        // Field 6 of /proc/self/stat is the session: the shell's own id when it leads a session.
        var spawn = ProcessSpawn(["/bin/sh", "-c", "echo \"$GREETING\"; pwd; read -r a b c d e f rest < /proc/self/stat; echo \"$f\""], environment: ["GREETING": "hello"])
        spawn.descriptors = [(0, .null(O_RDONLY)), (1, .copy(of: ends[1]))]
        spawn.workingDirectory = "/"
        spawn.newSession = true
        let pid = try spawn.start()
        SystemCall.close(ends[1])
        let output = try FileSystem.readAll(fd: ends[0], limit: 4_096, path: "the child's output")
        #expect(try SystemCall.waitpid(pid) == 0)
        let lines = output.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.split(separator: "\n")
        #expect(lines == ["hello", "/", Substring(String(pid))])
    }

    @Test("a program that cannot be started is an Errno naming posix_spawn and the program")
    func unstartableProgramIsAnErrno() {
        let missing = directory.path + "/no-such-program"
        do {
            _ = try ProcessSpawn([missing], environment: [:]).start()
            Issue.record("a missing program started")
        } catch {
            #expect(error.code == ENOENT)
            #expect(error.description == "posix_spawn \(missing): No such file or directory")
        }
    }

    @Test("a child is seen running, then ended without being reaped, then reaped once")
    func childEndsThenIsReaped() throws {
        let pid = try ProcessSpawn(["/bin/sleep", "30"], environment: [:]).start()
        #expect(try SystemCall.waitpidIfEnded(pid) == nil)
        #expect(try !SystemCall.hasEnded(pid))
        try SystemCall.kill(pid, SIGKILL)
        while try !SystemCall.hasEnded(pid) { usleep(1_000) }
        // Not reaped by hasEnded: the wait status is still there to take.
        let status = try #require(try SystemCall.waitpidIfEnded(pid))
        #expect(status & 0x7F == SIGKILL)
        #expect(throws: Errno.self) { try SystemCall.waitpidIfEnded(pid) }
    }

    @Test("Unix sockets: an abstract name binds once, a socket file nobody listens on refuses, a path too long has no address")
    func unixSocketsSayWhatFailed() throws {
        let name = Array("swift-keychain-test:\(getpid()):\(UInt64.random(in: 0...UInt64.max))".utf8)
        let address = try #require(UnixSocketAddress(abstract: name))
        let first = try SystemCall.unixSocket(SOCK_DGRAM)
        defer { SystemCall.close(first) }
        try SystemCall.bind(first, to: address)
        let second = try SystemCall.unixSocket(SOCK_DGRAM)
        defer { SystemCall.close(second) }
        #expect(throws: Errno(EADDRINUSE, call: "bind")) { try SystemCall.bind(second, to: address) }

        // A socket file left by a listener that closed: connecting is refused.
        let path = directory.path + "/stale.socket"
        let listener = try SystemCall.unixSocket(SOCK_STREAM)
        try SystemCall.bind(listener, to: try #require(UnixSocketAddress(path: path)), path: path)
        SystemCall.close(listener)
        let client = try SystemCall.unixSocket(SOCK_STREAM)
        defer { SystemCall.close(client) }
        #expect(throws: Errno(ECONNREFUSED, call: "connect", path: path)) { try SystemCall.connect(client, to: UnixSocketAddress(path: path)!, path: path) }
        #expect(SystemCall.accessible(path, F_OK))
        #expect(!SystemCall.accessible(path + ".missing", F_OK))

        #expect(UnixSocketAddress(path: "/" + String(repeating: "a", count: UnixSocketAddress.capacity)) == nil)
        #expect(UnixSocketAddress(path: "/" + String(repeating: "a", count: UnixSocketAddress.capacity - 1)) != nil)
    }

    @Test("a pipe's ends are close-on-exec and, when asked, non-blocking: reading an empty one is EAGAIN, not a wait")
    func pipeEndsAreCloseOnExecAndNonBlocking() throws {
        let ends = try SystemCall.pipe(nonBlocking: true)
        defer { [ends.read, ends.write].forEach(SystemCall.close) }
        for end in [ends.read, ends.write] {
            #expect(fcntl(end, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(end, F_GETFL) & O_NONBLOCK != 0)
        }
        var byte: UInt8 = 0
        #expect(throws: Errno(EAGAIN, call: "read")) { try withUnsafeMutableBytes(of: &byte) { buffer throws(Errno) in _ = try SystemCall.read(ends.read, into: buffer) } }
        #expect(try [UInt8(9)].withUnsafeBytes { bytes throws(Errno) in try SystemCall.write(ends.write, bytes) } == 1)
        #expect(try withUnsafeMutableBytes(of: &byte) { buffer throws(Errno) in try SystemCall.read(ends.read, into: buffer) } == 1 && byte == 9)
        let blocking = try SystemCall.pipe()
        defer { [blocking.read, blocking.write].forEach(SystemCall.close) }
        #expect(fcntl(blocking.read, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(blocking.read, F_GETFL) & O_NONBLOCK == 0)
    }

    @Test("a standard descriptor opened on a file is kept across exec, unlike every other descriptor open makes")
    func standardDescriptorIsInherited() throws {
        // A number far above what the test process uses stands for a closed standard descriptor
        // (closing the runner's own would take its output).
        let target: Int32 = 900
        #expect(!SystemCall.isOpen(target))
        try SystemCall.openStandard(target, "/dev/null", O_RDONLY)
        defer { SystemCall.close(target) }
        #expect(SystemCall.isOpen(target))
        #expect(fcntl(target, F_GETFD) & FD_CLOEXEC == 0)
        let ordinary = try SystemCall.open("/dev/null", O_RDONLY)
        defer { SystemCall.close(ordinary) }
        #expect(fcntl(ordinary, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("a terminal is told from a pipe, and named by the path of its device")
    func terminalIsToldAndNamed() throws {
        let ends = try SystemCall.pipe()
        defer { [ends.read, ends.write].forEach(SystemCall.close) }
        #expect(!SystemCall.isTerminal(ends.read))
        #expect(SystemCall.terminalName(ends.read) == nil)
        // A pseudo-terminal: the multiplexer, its slave unlocked (TIOCSPTLCK) and numbered (TIOCGPTN).
        let master = try SystemCall.open("/dev/ptmx", O_RDWR | O_NOCTTY)
        defer { SystemCall.close(master) }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        try #require(ioctl(master, UInt(0x4004_5431), &unlock) == 0 && ioctl(master, UInt(0x8004_5430), &number) == 0)
        let slave = try SystemCall.open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        defer { SystemCall.close(slave) }
        #expect(SystemCall.isTerminal(slave))
        #expect(SystemCall.terminalName(slave) == "/dev/pts/\(number)")
    }

    @Test("a file is replaced whole with the mode asked whatever the umask, and leaves no temporary beside it")
    func replacedFileHasItsModeAndNoTemporary() throws {
        let file = directory.path + "/unit"
        try "old".write(toFile: file, atomically: false, encoding: .utf8)
        let previous = umask(0o077)
        defer { umask(previous) }
        try FileSystem.replaceFile(file, mode: 0o755) { fd throws(Errno) in try SystemCall.writeAll(fd, "new", path: file) }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "new")
        #expect(try SystemCall.stat(file).st_mode & 0o777 == 0o755)
        #expect(!FileManager.default.fileExists(atPath: file + ".new"))
    }

    @Test("a replacement that fails while writing leaves the file as it was and removes what it wrote")
    func failedReplacementKeepsTheFile() throws {
        let file = directory.path + "/unit"
        try "old".write(toFile: file, atomically: false, encoding: .utf8)
        do {
            try FileSystem.replaceFile(file, mode: 0o644) { fd throws(Errno) in
                try SystemCall.writeAll(fd, "half", path: file)
                throw Errno(ENOSPC, call: "write", path: file)
            }
            Issue.record("a failed write replaced the file")
        } catch {
            #expect(error.code == ENOSPC)
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "old")
        #expect(!FileManager.default.fileExists(atPath: file + ".new"))
    }

    @Test("a replacement never writes through a link planted where its temporary goes")
    func replacementDoesNotFollowALink() throws {
        let file = directory.path + "/unit", elsewhere = directory.path + "/elsewhere"
        try "elsewhere".write(toFile: elsewhere, atomically: false, encoding: .utf8)
        #expect(symlink(elsewhere, file + ".new") == 0)
        #expect(throws: Errno.self) { try FileSystem.replaceFile(file, mode: 0o644) { fd throws(Errno) in try SystemCall.writeAll(fd, "new", path: file) } }
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "elsewhere")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test("a small text file is read whole, and one over its limit is refused, not cut")
    func textReadWholeOrRefused() throws {
        let file = directory.path + "/sessions"
        try "SESSIONS=3 c1\n".write(toFile: file, atomically: false, encoding: .utf8)
        #expect(try FileSystem.readText(file) == "SESSIONS=3 c1\n")
        #expect(throws: Errno(EFBIG, call: "read", path: file, limit: 4)) { try FileSystem.readText(file, limit: 4) }
    }

    @Test("a directory's entries are listed without . and .., and a missing one is an Errno naming opendir")
    func directoryEntries() throws {
        for name in ["a", "b"] { try "".write(toFile: directory.path + "/" + name, atomically: false, encoding: .utf8) }
        #expect(Set(try FileSystem.entryNames(in: directory.path)) == ["a", "b"])
        #expect(throws: Errno(ENOENT, call: "opendir", path: directory.path + "/missing")) { try FileSystem.entryNames(in: directory.path + "/missing") }
    }

    @Test("readlink gives what a link holds, and this program's own file is where /proc says")
    func linksRead() throws {
        let link = directory.path + "/link"
        #expect(symlink("/some/target", link) == 0)
        #expect(try SystemCall.readlink(link) == "/some/target")
        #expect(throws: Errno(EINVAL, call: "readlink", path: directory.path)) { try SystemCall.readlink(directory.path) }
        let own = try #require(FileSystem.ownExecutable)
        #expect(own.hasPrefix("/") && FileManager.default.isExecutableFile(atPath: own))
    }
}
