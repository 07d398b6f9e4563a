import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCLI

#if canImport(Glibc)
    import Glibc
#endif

/// Programs the command starts (the sync agent, systemctl, the user's dbus-daemon).
@Suite("Programs the command starts")
struct ChildProcessTests {
    @Test("a program the command starts gets SIGPIPE's default back, although the command itself ignores it")
    func childGetsDefaultSigpipe() throws {
        let directory = TemporaryDirectory()
        let report = directory.path + "/status"
        // As `keychain` does in main: a closed pipe is an exit status of the command's own.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let pid = try #require(ChildProcess.start(["/bin/sh", "-c", "grep '^SigIgn:' /proc/self/status > '\(report)'"], quiet: true))
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let line = try String(contentsOfFile: report, encoding: .utf8)
        let mask = try #require(UInt64(line.split(separator: ":")[1].trimmingCharacters(in: .whitespacesAndNewlines), radix: 16))
        #expect(mask & (1 << (UInt64(SIGPIPE) - 1)) == 0, "the child ignores SIGPIPE: \(line)")
    }
}
