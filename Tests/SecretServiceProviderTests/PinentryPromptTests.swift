import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `Unlock` on a locked `keychain serve` shows a real pinentry (Debian's pinentry-curses, on a
/// pseudo-terminal the test owns and types on) and unlocks the vault with what the person types;
/// the daemon answers other clients meanwhile, and a pinentry that misbehaves ends the prompt
/// dismissed.
@Suite(
    "keychain serve unlocks through pinentry",
    .enabled(if: ServedVault.unavailableReason == nil && PythonClient.unavailableReason == nil, "\(ServedVault.unavailableReason ?? PythonClient.unavailableReason ?? "")"))
struct PinentryPromptTests {
    static let pinentry = "/usr/bin/pinentry-curses"
    static let pinentryMissing = FileManager.default.isExecutableFile(atPath: pinentry) ? nil : "needs \(pinentry) (apt-get install pinentry-curses)"

    /// A vault with a passphrase and an item (service=x, secret "value") stored while it was
    /// open; served again, locked, with `environment` (the pinentry and where it shows).
    static func lockedVault(_ environment: [String: String]) throws -> ServedVault {
        try lockedVault { _, _ in environment }
    }

    /// ``lockedVault(_:)`` with the environment made for the vault and the file that holds its
    /// passphrase (a pinentry that answers with it).
    static func lockedVault(_ environment: (ServedVault, _ passphraseFile: String) -> [String: String]) throws -> ServedVault {
        let served = try ServedVault(serving: false)
        let file = try LockedVaultTests.passphraseVault(served)
        try served.startServing(environment: ["KEYCHAIN_PASSPHRASE_FILE": file])
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value").status == 0)
        served.stopServing()
        try served.startServing(environment: environment(served, file))
        #expect(served.waitForProvider())
        return served
    }

    /// The client: Unlock, then Prompt, then the item's secret (Clients/unlock_prompt.py).
    static func client(_ served: ServedVault, _ arguments: [String]) throws -> (pid: pid_t, stdout: Int32) {
        try Subprocess.launchReadingOutput(PythonClient.python, [PythonClient.scripts + "/unlock_prompt.py"] + arguments, environment: served.environment)
    }

    static func finish(_ client: (pid: pid_t, stdout: Int32)) -> String {
        let rest = Subprocess.readAll(client.stdout)
        close(client.stdout)
        _ = Subprocess.wait(for: client.pid)
        return rest
    }

    @Test(
        "a wrong passphrase is said so and asked again; the right one unlocks, the prompt completes, and the client reads the secret",
        .enabled(if: pinentryMissing == nil, "\(pinentryMissing ?? "")"))
    func wrongThenRightPassphraseUnlocks() throws {
        let terminal = try PseudoTerminal()
        let served = try Self.lockedVault(["KEYCHAIN_PINENTRY": Self.pinentry, "GPG_TTY": terminal.name, "TERM": "xterm"])
        let client = try Self.client(served, ["answer"])
        #expect(Subprocess.readOutput(client.stdout, until: "prompting\n"))
        #expect(terminal.waitFor("Passphrase:"), "\(terminal.shown)\(served.serveErrors)")

        // The daemon answers another client while the pinentry is up: its loop is not blocked.
        let started = ContinuousClock.now
        let other = try served.run(
            "/usr/bin/dbus-send", SecretServiceProperty.get("Collections", of: "org.freedesktop.Secret.Service", at: "/org/freedesktop/secrets", replyTimeout: 5000))
        #expect(other.status == 0 && other.output.contains("/collection/login"), "\(other.output)\(other.stderr)")
        #expect(ContinuousClock.now - started < .seconds(3))

        terminal.type("not-the-passphrase\r")
        #expect(terminal.waitFor("Wrong passphrase"), "\(terminal.shown)")
        terminal.type("pass-phrase-1\r")
        let rest = Self.finish(client)
        #expect(rest == "completed unlocked /org/freedesktop/secrets/collection/login /org/freedesktop/secrets/collection/sync\nsecret value\n", "\(rest)\(served.serveErrors)")
        #expect(!terminal.shown.contains("pass-phrase-1"), "the pinentry echoed the passphrase")
        #expect(!served.serveErrors.contains("pass-phrase-1") && !served.serveErrors.contains("not-the-passphrase"))
    }

    @Test(
        "a vault locked since the daemon started serves, once unlocked, the collections created before and their items, without a restart",
        .enabled(if: pinentryMissing == nil, "\(pinentryMissing ?? "")"))
    func unlockServesCollectionsCreatedBefore() throws {
        let terminal = try PseudoTerminal()
        let served = try ServedVault(serving: false)
        let file = try LockedVaultTests.passphraseVault(served)
        try served.startServing(environment: ["KEYCHAIN_PASSPHRASE_FILE": file])
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value").status == 0)
        let made = try served.run(
            PythonClient.python,
            [
                "-c",
                "import secretstorage; c = secretstorage.dbus_init(); col = secretstorage.create_collection(c, 'Work Keys'); col.create_item('work item', {'project': 'apollo'}, b'w0rk')",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        served.stopServing()
        try served.startServing(environment: ["KEYCHAIN_PINENTRY": Self.pinentry, "GPG_TTY": terminal.name, "TERM": "xterm"])
        #expect(served.waitForProvider())

        let client = try Self.client(served, ["answer"])
        #expect(Subprocess.readOutput(client.stdout, until: "prompting\n"))
        #expect(terminal.waitFor("Passphrase:"), "\(terminal.shown)\(served.serveErrors)")
        terminal.type("pass-phrase-1\r")
        #expect(Self.finish(client).contains("completed unlocked"))

        let collections = try served.run(
            "/usr/bin/dbus-send", SecretServiceProperty.get("Collections", of: "org.freedesktop.Secret.Service", at: "/org/freedesktop/secrets"))
        #expect(collections.output.contains("/org/freedesktop/secrets/collection/workkeys"), "\(collections.output)")
        let looked = try served.run("/usr/bin/secret-tool", ["lookup", "project", "apollo"])
        #expect(looked.output == "w0rk", "\(looked.stderr)\(served.serveErrors)")
    }

    @Test("two clients unlocking at once share one pinentry, and both complete unlocked", .enabled(if: pinentryMissing == nil, "\(pinentryMissing ?? "")"))
    func promptsShareOneDialog() throws {
        let terminal = try PseudoTerminal()
        let served = try Self.lockedVault(["KEYCHAIN_PINENTRY": Self.pinentry, "GPG_TTY": terminal.name, "TERM": "xterm"])
        let first = try Self.client(served, ["answer"]), second = try Self.client(served, ["answer"])
        #expect(Subprocess.readOutput(first.stdout, until: "prompting\n"))
        #expect(Subprocess.readOutput(second.stdout, until: "prompting\n"))
        #expect(terminal.waitFor("Passphrase:"), "\(terminal.shown)\(served.serveErrors)")
        #expect(Self.pinentries(of: served).count == 1)
        terminal.type("pass-phrase-1\r")
        for client in [first, second] {
            let rest = Self.finish(client)
            #expect(rest == "completed unlocked /org/freedesktop/secrets/collection/login /org/freedesktop/secrets/collection/sync\nsecret value\n", "\(rest)\(served.serveErrors)")
        }
    }

    @Test(
        "Dismiss while the pinentry is up completes the prompt dismissed, ends the pinentry, and the vault stays locked",
        .enabled(if: pinentryMissing == nil, "\(pinentryMissing ?? "")"))
    func dismissEndsThePinentry() throws {
        let terminal = try PseudoTerminal()
        let served = try Self.lockedVault(["KEYCHAIN_PINENTRY": Self.pinentry, "GPG_TTY": terminal.name, "TERM": "xterm"])
        let signal = served.directory.path + "/dismiss-now"
        let client = try Self.client(served, ["dismiss", signal])
        #expect(Subprocess.readOutput(client.stdout, until: "prompting\n"))
        #expect(terminal.waitFor("Passphrase:"), "\(terminal.shown)\(served.serveErrors)")
        #expect(FileManager.default.createFile(atPath: signal, contents: Data()))
        let rest = Self.finish(client)
        #expect(rest == "completed dismissed\nlocked\n", "\(rest)\(served.serveErrors)")
        #expect(Self.pinentriesEnd(of: served), "a pinentry outlived its prompt")
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }

    @Test(
        "cancelling the pinentry (its Cancel button) completes the prompt dismissed, and the vault stays locked", .enabled(if: pinentryMissing == nil, "\(pinentryMissing ?? "")"))
    func cancelInThePinentryDismisses() throws {
        let terminal = try PseudoTerminal()
        let served = try Self.lockedVault(["KEYCHAIN_PINENTRY": Self.pinentry, "GPG_TTY": terminal.name, "TERM": "xterm"])
        let client = try Self.client(served, ["answer"])
        #expect(Subprocess.readOutput(client.stdout, until: "prompting\n"))
        #expect(terminal.waitFor("Passphrase:"), "\(terminal.shown)\(served.serveErrors)")
        // Tab past the entry and OK to Cancel, then Return.
        terminal.type("\t\t\r")
        let rest = Self.finish(client)
        #expect(rest == "completed dismissed\nlocked\n", "\(rest)\(served.serveErrors)")
        #expect(served.serveErrors.contains("dismissed: cancelled"), "\(served.serveErrors)")
        #expect(Self.pinentriesEnd(of: served), "a pinentry outlived its prompt")
    }

    @Test("the client leaving the bus while the pinentry is up ends the pinentry", .enabled(if: pinentryMissing == nil, "\(pinentryMissing ?? "")"))
    func clientLeavingEndsThePinentry() throws {
        let terminal = try PseudoTerminal()
        let served = try Self.lockedVault(["KEYCHAIN_PINENTRY": Self.pinentry, "GPG_TTY": terminal.name, "TERM": "xterm"])
        let client = try Self.client(served, ["answer"])
        #expect(Subprocess.readOutput(client.stdout, until: "prompting\n"))
        #expect(terminal.waitFor("Passphrase:"), "\(terminal.shown)\(served.serveErrors)")
        #expect(!Self.pinentries(of: served).isEmpty)
        kill(client.pid, SIGKILL)
        _ = Self.finish(client)
        #expect(Self.pinentriesEnd(of: served), "a pinentry outlived its client")
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }

    @Test(
        "a pinentry that dies, talks garbage or hangs ends the prompt dismissed within a bound, and the daemon stays up",
        arguments: [
            "exit 1",
            "echo 'this is not assuan'; exec sleep 30",
            "echo 'OK ready'; exec sleep 600",
        ])
    func misbehavingPinentryIsDismissed(script: String) throws {
        let scratch = TemporaryDirectory()
        let program = scratch.path + "/fake-pinentry"
        #expect(ProgramFile.write("#!/bin/sh\n\(script)\n", to: program))
        // A display the fake pinentry ignores: somewhere a pinentry can be shown.
        let served = try Self.lockedVault(["KEYCHAIN_PINENTRY": program, "DISPLAY": ":99"])
        let started = ContinuousClock.now
        let client = try Self.client(served, ["answer"])
        let rest = Self.finish(client)
        #expect(rest.hasSuffix("completed dismissed\nlocked\n"), "\(rest)\(served.serveErrors)")
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
        #expect(served.serveErrors.contains("the unlock prompt was dismissed"), "\(served.serveErrors)")
    }

    @Test("with a pinentry but no terminal and no display, the prompt ends dismissed at once and the daemon's log says to run keychain unlock")
    func nowhereToShowEndsDismissedAtOnce() throws {
        let served = try Self.lockedVault(["KEYCHAIN_PINENTRY": "/bin/true"])
        let started = ContinuousClock.now
        let rest = Self.finish(try Self.client(served, ["answer"]))
        #expect(rest == "prompt shown\nprompting\ncompleted dismissed\nlocked\n", "\(rest)")
        #expect(served.serveErrors.contains("run `keychain unlock`"), "\(served.serveErrors)")
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// Whether the daemon's pinentries are all gone within 5 s (killed, then waited for).
    static func pinentriesEnd(of served: ServedVault) -> Bool {
        for _ in 0..<200 {
            if pinentries(of: served).isEmpty { return true }
            usleep(25_000)
        }
        return false
    }

    /// The pids of the daemon's child processes (its pinentries).
    static func pinentries(of served: ServedVault) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { entry in
            guard Int32(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let end = stat.range(of: ")", options: .backwards)
            else { return false }
            // After the command's closing parenthesis: the state, then the parent's pid.
            let fields = stat[end.upperBound...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == served.servePID
        }
    }
}

/// A pseudo-terminal of the test's own: a pinentry is told its name (`GPG_TTY`), draws on it,
/// and reads what the test types on the master side.
final class PseudoTerminal {
    let master: Int32
    /// The slave side, held open so that the terminal lives between pinentries.
    private let slave: Int32
    let name: String
    private(set) var output = Data()

    init() throws {
        // posix_openpt/unlockpt/ptsname in their Linux form (Glibc's Swift module hides the XSI
        // names): TIOCSPTLCK = _IOW('T', 0x31, int), TIOCGPTN = _IOR('T', 0x30, unsigned int).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw POSIXError(.ENOTTY) }
        var unlock: Int32 = 0, number: UInt32 = 0
        guard ioctl(master, UInt(0x4004_5431), &unlock) == 0, ioctl(master, UInt(0x8004_5430), &number) == 0 else { throw POSIXError(.ENOTTY) }
        name = "/dev/pts/\(number)"
        slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw POSIXError(.ENOTTY) }
        // A curses pinentry lays its dialog out on the terminal's size.
        var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    deinit {
        close(slave)
        close(master)
    }

    /// Everything shown so far, as text.
    var shown: String { String(decoding: output, as: UTF8.self) }

    /// Reads what is shown until `text` appears after what earlier waits consumed, or 30 s pass.
    func waitFor(_ text: String) -> Bool {
        let from = output.count
        let deadline = ContinuousClock.now + .seconds(30)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            if String(decoding: output[from...], as: UTF8.self).contains(text) { return true }
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 200) > 0 else { continue }
            let n = read(master, &buffer, buffer.count)
            if n > 0 { output.append(contentsOf: buffer[0..<n]) }
        }
        return false
    }

    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress!, $0.count) }
    }
}
