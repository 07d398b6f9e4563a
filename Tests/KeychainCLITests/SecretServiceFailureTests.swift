import Foundation
import KeychainTestSupport
import Testing

/// Each failure of the Secret Service is a distinct, clear error within a bounded time.
@Suite(
    "Secret Service failure modes, each bounded in time", .serialized,
    .enabled(if: PrivateSecretService.unavailableReason == nil, "\(PrivateSecretService.unavailableReason ?? "")"))
struct SecretServiceFailureTests {
    let directory = TemporaryDirectory()

    func timed(_ arguments: [String], input: String = "", environment: [String: String]) throws -> (CommandResult, Double) {
        let start = Date()
        let result = try KeychainExecutable.run(arguments, input: Data(input.utf8), environment: environment, home: directory.path)
        return (result, Date().timeIntervalSince(start))
    }

    @Test("no session bus: a clear error at once")
    func noSessionBus() throws {
        let emptyRuntime = directory.path + "/run"
        try FileManager.default.createDirectory(atPath: emptyRuntime, withIntermediateDirectories: true)
        let (result, seconds) = try timed(["get", "--backend", "secret-service", "--service", "s", "a"], environment: ["XDG_RUNTIME_DIR": emptyRuntime])
        #expect(result.status == 4 && result.stderr.contains("no D-Bus session bus"), "\(result.stderr)")
        #expect(seconds < 5)
    }

    @Test("a session bus with no Secret Service on it: a clear error at once")
    func busWithoutSecretService() throws {
        let socket = directory.path + "/bus"
        let config = directory.file(
            "bus.conf",
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(socket)</listen>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """)
        let bus = try Subprocess.start("/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork"], environment: [:])
        defer { kill(bus, SIGTERM); Subprocess.wait(for: bus) }
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: socket) { Thread.sleep(forTimeInterval: 0.02) }
        let (result, seconds) = try timed(["get", "--backend", "secret-service", "--service", "s", "a"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(socket)"])
        #expect(result.status == 4 && result.stderr.contains("no Secret Service is running"), "\(result.stderr)")
        #expect(seconds < 5)
    }

    @Test("a locked collection is reported as locked, for reads and writes, never as not found")
    func lockedCollection() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        #expect(try timed(["set", "--service", "s", "a"], input: "v", environment: service.environment).0.status == 0)
        try service.lockDefaultCollection()
        let (read, readSeconds) = try timed(["get", "--service", "s", "a"], environment: service.environment)
        #expect(read.status == 3 && read.stderr.contains("locked"), "\(read.stderr)")
        #expect(
            read.stderr.contains("keyring manager") && !read.stderr.contains("with its passphrase"),
            "the Secret Service is unlocked by the desktop, not by `keychain unlock`: \(read.stderr)")
        let (missing, _) = try timed(["get", "--service", "s", "nobody"], environment: service.environment)
        #expect(missing.status == 3, "a missing item in a locked collection is still 'locked': \(missing.stderr)")
        let (write, writeSeconds) = try timed(["set", "--service", "s", "b"], input: "v", environment: service.environment)
        #expect(write.status == 3 && write.stderr.contains("locked"), "\(write.stderr)")
        #expect(readSeconds < 5 && writeSeconds < 5)
    }

    @Test("the daemon killed between two calls: the next call fails clearly and quickly")
    func daemonKilled() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        #expect(try timed(["set", "--service", "s", "a"], input: "v", environment: service.environment).0.status == 0)
        kill(service.keyringPID, SIGKILL)
        Thread.sleep(forTimeInterval: 0.2)
        var environment = service.environment
        environment["KEYCHAIN_TIMEOUT"] = "3"
        let (result, seconds) = try timed(["get", "--service", "s", "a"], environment: environment)
        // D-Bus may re-activate a fresh daemon whose collection is locked, or none at all:
        // either way a clear error (locked, or unavailable), never a hang or a wrong value.
        #expect(result.status == 3 || result.status == 4, "\(result.stderr)")
        #expect(!result.stderr.isEmpty && result.output.isEmpty)
        #expect(seconds < 8)
    }

    @Test("a daemon that stops answering: the call gives up after the timeout")
    func frozenDaemon() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        #expect(try timed(["set", "--service", "s", "a"], input: "v", environment: service.environment).0.status == 0)
        kill(service.keyringPID, SIGSTOP)
        defer { kill(service.keyringPID, SIGCONT) }
        var environment = service.environment
        environment["KEYCHAIN_TIMEOUT"] = "1"
        let (result, seconds) = try timed(["get", "--service", "s", "a"], environment: environment)
        #expect(result.status == 4 && result.stderr.contains("did not answer within"), "\(result.stderr)")
        #expect(seconds < 4)
    }

    @Test("Valet items are found by secret-tool with the documented attributes, and secret-tool's items are read back with --foreign")
    func secretToolInterop() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        let set = try timed(["set", "--identifier", "Druidia", "Skroob"], input: "12345", environment: service.environment).0
        #expect(set.status == 0, "\(set.stderr)")
        func secretTool(_ arguments: [String], input: String = "") throws -> (Int32, String) {
            let result = try Subprocess.run("/usr/bin/secret-tool", arguments, environment: service.environment, input: Data(input.utf8))
            return (result.status, result.output)
        }
        let lookup = try secretTool([
            "lookup", "class", "genp", "account", "Skroob",
            "service", "VAL_VALValet_initWithIdentifier:accessibility:_Druidia_AccessibleWhenUnlocked",
        ])
        #expect(lookup == (0, "12345"))
        let search = try secretTool(["search", "--all", "account", "Skroob"])
        #expect(search.1.contains("label = Druidia: Skroob") && search.1.contains("schema = org.swift-keychain.Item"))
        #expect(try secretTool(["store", "--label=Deploy token", "service", "api.example.com", "account", "deploy"], input: "tok").0 == 0)
        let hidden = try timed(["get", "--service", "api.example.com", "deploy"], environment: service.environment).0
        #expect(hidden.status == 1, "another program's item is not ours unless --foreign: \(hidden.stderr)")
        let read = try timed(["get", "--foreign", "--service", "api.example.com", "deploy"], environment: service.environment).0
        #expect(read.status == 0 && read.output == "tok\n", "\(read.stderr)")
    }
}
