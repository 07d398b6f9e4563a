import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain serve` shared between clients: no client at its limit locks out another, the
/// in-memory collection is bounded, a prompt answers only its own client, and a daemon the bus
/// started goes away when idle and comes back at the next call.
@Suite(
    "keychain serve shares itself fairly",
    .enabled(if: ServedVault.unavailableReason == nil && PythonClient.unavailableReason == nil, "\(ServedVault.unavailableReason ?? PythonClient.unavailableReason ?? "")"))
struct FairShareTests {
    /// The lines of a Clients/fair_share.py run, by check name.
    static func checks(_ mode: String, _ served: ServedVault) throws -> [String: String] {
        let result = try PythonClient.run("fair_share.py", [mode], served)
        #expect(result.status == 0, "\(result.stderr)\(served.serveErrors)")
        var got: [String: String] = [:]
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { got[String(parts[0])] = String(parts[1]) }
        }
        return got
    }

    @Test(
        "one client holding thousands of sessions is never refused and leaves others served; the session collection refuses past its bound, and takes more once an item is deleted")
    func sessionsAndMemory() throws {
        let served = try ServedVault()
        let got = try Self.checks("sessions", served)
        for check in ["one-client-5000-sessions", "another-client-served", "newest-session-usable", "session-paths-random", "room-after-delete"] {
            #expect(got[check] == "ok", "\(check): \(got[check] ?? "missing")")
        }
        #expect(got["session-collection-bounded"] == "org.freedesktop.DBus.Error.LimitsExceeded", "\(got)")
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }

    @Test("sixteen connections holding 1,024 sessions each do not lock out the next client")
    func manyConnectionsDoNotLockOutAnother() throws {
        let served = try ServedVault()
        let got = try Self.checks("many-clients", served)
        #expect(got["sixteen-clients-hold-16384"] == "ok" && got["next-client-served"] == "ok", "\(got)")
    }

    @Test("secretstorage reads 1,100 items, opening a session for each and closing none")
    func secretstorageReadsManyItems() throws {
        let served = try ServedVault()
        let result = try PythonClient.run("secretstorage_many.py", ["1100"], served)
        #expect(result.output == "read 1100 wrong 0\n", "\(result.output)\(result.stderr.suffix(2_000))\(served.serveErrors)")
    }

    @Test("a prompt has a random path, and another client's Prompt or Dismiss of it is refused; its own client's is not")
    func promptsBelongToTheirClient() throws {
        let served = try PinentryPromptTests.lockedVault(["KEYCHAIN_PINENTRY": "/bin/true"])
        let got = try Self.checks("prompts", served)
        #expect(got["prompt-handed-out"] == "ok" && got["prompt-path-random"] == "ok", "\(got)")
        #expect(got["dismiss-by-another-client"] == "org.freedesktop.DBus.Error.AccessDenied", "\(got)")
        #expect(got["prompt-by-another-client"] == "org.freedesktop.DBus.Error.AccessDenied", "\(got)")
        #expect(got["dismiss-by-its-client"] == "ok", "\(got)")
    }

    @Test("a daemon the bus started exits once idle, giving up the name, and the next call starts it again with the items kept")
    func activatedDaemonExitsWhenIdle() throws {
        let served = try ServedVault(serving: false)
        let services = served.directory.path + "/data/dbus-1/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        let activation = "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=\(KeychainExecutable.path) serve --idle-exit 1\n"
        try activation.write(toFile: services + "/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        // The bus started its own way (no activation file yet) reads it now.
        _ = try served.run("/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.ReloadConfig"])

        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "idle"], input: "value")
        #expect(stored.status == 0, "\(stored.stderr)")
        let first = Self.providerPID(served)
        #expect(first != nil, "nothing owns org.freedesktop.secrets after the first call")
        #expect(Self.nameReleased(served), "the activated daemon did not exit when idle")
        if let first { #expect(Self.processEnds(first), "the activated daemon gave up the name but lives on") }

        let lookedUp = try served.run("/usr/bin/secret-tool", ["lookup", "service", "idle"])
        #expect(lookedUp.output == "value", "\(lookedUp.output)\(lookedUp.stderr)")
        // The second daemon exits on its own too; it is stopped here if it has not.
        if let second = Self.providerPID(served) {
            if !Self.processEnds(second) { kill(second, SIGTERM) }
        }
    }

    /// The pid of the process owning org.freedesktop.secrets, if any.
    static func providerPID(_ served: ServedVault) -> pid_t? {
        let asked = try? served.run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"])
        guard asked?.status == 0, let word = asked?.output.split(separator: " ").last else { return nil }
        return pid_t(word.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Whether the name loses its owner within 30 s.
    static func nameReleased(_ served: ServedVault) -> Bool {
        for _ in 0..<300 {
            let asked = try? served.run(
                "/usr/bin/dbus-send",
                ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"])
            if asked?.output.contains("boolean false") == true { return true }
            usleep(100_000)
        }
        return false
    }

    /// Whether `pid` (not this process's child: the bus's) is gone or a zombie within 10 s.
    static func processEnds(_ pid: pid_t) -> Bool {
        for _ in 0..<100 {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.range(of: ")", options: .backwards) else { return true }
            if stat[end.upperBound...].hasPrefix(" Z") { return true }
            usleep(100_000)
        }
        return false
    }
}
