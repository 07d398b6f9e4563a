import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

@testable import KeychainServe

#if canImport(Glibc)
    import Glibc
#endif

/// The pinentry's pure parts: Assuan's escaping both ways, and where a pinentry can be shown.
@Suite("keychain serve's pinentry parts")
struct PinentryPartsTests {
    @Test("a command's argument escapes %, CR, LF and control bytes, so that no text starts a command of its own")
    func escapesArguments() {
        #expect(AssuanCoding.escape("100% sure\nBYE\r\t") == "100%25 sure%0ABYE%0D%09")
        #expect(AssuanCoding.escape("Passwort für é") == "Passwort für é")
    }

    @Test("a data line decodes %XX (either case) into the passphrase's bytes; a broken escape is refused")
    func decodesData() {
        func decoded(_ text: String) -> [UInt8]? {
            Array(text.utf8).withUnsafeBytes { AssuanCoding.decode($0) }.map { $0.withUnsafeBytes { Array($0) } }
        }
        #expect(decoded("a%25b%0Ac%0d") == Array("a%b\nc\r".utf8))
        #expect(decoded("") == [])
        #expect(decoded("%00") == [0])
        for broken in ["%", "%4", "%G0", "ab%0"] { #expect(decoded(broken) == nil, "\(broken)") }
    }

    @Test("a pinentry is chosen only where it can be shown: a display, GPG_TTY or the daemon's own terminal")
    func choosesWhereItCanBeShown() {
        let program = ["KEYCHAIN_PINENTRY": "/bin/true", "PATH": "/usr/bin:/bin"]
        #expect(PinentryChoice.choose(environment: program, standardInputTerminal: nil) == nil)
        #expect(PinentryChoice.choose(environment: program.merging(["DISPLAY": ":0"]) { $1 }, standardInputTerminal: nil)?.ttyName == nil)
        #expect(PinentryChoice.choose(environment: program.merging(["WAYLAND_DISPLAY": "wayland-0"]) { $1 }, standardInputTerminal: nil) != nil)
        let onTerminal = PinentryChoice.choose(environment: program.merging(["GPG_TTY": "/dev/null", "TERM": "xterm"]) { $1 }, standardInputTerminal: nil)
        #expect(onTerminal?.ttyName == "/dev/null" && onTerminal?.ttyType == "xterm")
        // Not a terminal (a regular file), and a program that is no program: nowhere to show one.
        #expect(PinentryChoice.choose(environment: program.merging(["GPG_TTY": "/etc/passwd"]) { $1 }, standardInputTerminal: nil) == nil)
        #expect(PinentryChoice.choose(environment: ["KEYCHAIN_PINENTRY": "/nonexistent/pinentry", "DISPLAY": ":0"], standardInputTerminal: nil) == nil)
        #expect(PinentryChoice.choose(environment: ["KEYCHAIN_PINENTRY": "true", "DISPLAY": ":0"], standardInputTerminal: nil) == nil)
        // The passphrase file's name is not passed on to the pinentry.
        let passed = PinentryChoice.choose(environment: program.merging(["DISPLAY": ":0", "KEYCHAIN_PASSPHRASE_FILE": "/p"]) { $1 }, standardInputTerminal: nil)
        #expect(passed?.environment["KEYCHAIN_PASSPHRASE_FILE"] == nil && passed?.environment["DISPLAY"] == ":0")
    }

    @Test("a pinentry's children end with it: when it is dismissed, and when it exits on its own", .serialized, arguments: ["dismissed", "exits"])
    func childrenEndWithThePinentry(ending: String) throws {
        let directory = FileManager.default.temporaryDirectory.path + "/pinentry-children-" + ItemID.make()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A wrapper that starts a helper of its own, as a desktop pinentry may, then waits.
        let script = "#!/bin/sh\nsleep 600 &\necho $! > \(directory)/child\necho OK ready\nread line\n" + (ending == "exits" ? "exit 0\n" : "exec sleep 600\n")
        #expect(ProgramFile.write(script, to: directory + "/pinentry"))
        // A script just written can be busy for a moment (a process forked elsewhere in the test
        // run held it open for writing): started again then.
        let choice = PinentryChoice(program: directory + "/pinentry", ttyName: nil, ttyType: nil, environment: ["PATH": "/usr/bin:/bin"])
        var started: PinentryProcess?
        for _ in 0..<50 where started == nil {
            started = try? PinentryProcess(choice)
            if started == nil { usleep(20_000) }
        }
        let process = try #require(started)
        guard case .ok = try process.answer(by: .now + .seconds(10)) else {
            Issue.record("the pinentry did not greet")
            return
        }
        let child = try #require(pid_t(try String(contentsOfFile: directory + "/child", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(Self.isRunning(child))
        if ending == "dismissed" {
            process.terminate()
        } else {
            try process.send("BYE")
        }
        process.reap()
        var ended = false
        for _ in 0..<200 where !ended {
            ended = !Self.isRunning(child)
            if !ended { usleep(25_000) }
        }
        #expect(ended, "the pinentry's child \(child) lives on")
        if !ended { kill(child, SIGKILL) }
    }

    /// Whether `pid` names a live process (a zombie waiting for its parent has ended).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.range(of: ")", options: .backwards) else { return false }
        return !stat[end.upperBound...].hasPrefix(" Z")
    }
}
