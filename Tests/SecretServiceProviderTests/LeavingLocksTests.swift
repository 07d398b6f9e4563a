import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What python-dbusmock's logind needs: the system's Python with dbusmock and dbus-python.
enum MockLogindNeeds {
    static let python = "/usr/bin/python3"
    static let unavailableReason: String? = {
        if let reason = ServedVault.unavailableReason { return reason }
        let probe = try? Subprocess.run(python, ["-c", "import dbusmock, dbus"], environment: ["PATH": "/usr/bin:/bin"])
        return probe?.status == 0 ? nil : "python3-dbusmock is not installed (apt-get install python3-dbusmock)"
    }()
}

/// A private "system bus" with python-dbusmock's logind on it: what `keychain serve` hears
/// logind say. Stops exactly the processes it started.
final class MockLogind {
    let address: String
    private let busPID: pid_t
    private let mockPID: pid_t

    init(in directory: TemporaryDirectory) throws {
        let configuration =
            "<busconfig><type>system</type><listen>unix:path=\(directory.path)/system_bus</listen>"
            + "<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n"
        try configuration.write(toFile: directory.path + "/system.conf", atomically: true, encoding: .utf8)
        let started = try Subprocess.run(
            "/usr/bin/dbus-daemon", ["--config-file=\(directory.path)/system.conf", "--fork", "--print-address=1", "--print-pid=1"],
            environment: ["PATH": "/usr/bin:/bin"])
        let lines = started.output.split(separator: "\n")
        guard started.status == 0, lines.count >= 2, let pid = pid_t(lines[1]) else { throw POSIXError(.ECHILD) }
        address = String(lines[0])
        busPID = pid
        mockPID = try Subprocess.launch(
            MockLogindNeeds.python, ["-m", "dbusmock", "--system", "--template", "logind"], environment: ["PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": address],
            errorFile: directory.path + "/logind.err"
        ).pid
        for _ in 0..<400 {
            if (try? send(["/org/freedesktop/DBus", "--dest=org.freedesktop.DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.login1"]))?
                .output.contains("boolean true") == true
            {
                return
            }
            usleep(25_000)
        }
        throw POSIXError(.ETIMEDOUT)
    }

    deinit {
        kill(mockPID, SIGTERM)
        _ = Subprocess.wait(for: mockPID)
        kill(busPID, SIGTERM)
        for _ in 0..<200 where kill(busPID, 0) == 0 { usleep(10_000) }
    }

    var environment: [String: String] { ["PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": address] }

    /// dbus-send on the mock's bus: the object path, then the rest of dbus-send's arguments.
    @discardableResult
    func send(_ arguments: [String]) throws -> CommandResult {
        try Subprocess.run("/usr/bin/dbus-send", ["--bus=\(address)", "--print-reply", arguments[0]] + arguments.dropFirst(), environment: environment)
    }

    /// Emits `Manager.PrepareForSleep(going)`, as logind does before a suspend.
    func prepareForSleep(_ going: Bool) throws {
        let script =
            "import dbus, sys; bus = dbus.bus.BusConnection(sys.argv[1]); "
            + "bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1').EmitSignal("
            + "'org.freedesktop.login1.Manager', 'PrepareForSleep', 'b', [\(going ? "True" : "False")], dbus_interface='org.freedesktop.DBus.Mock')"
        let emitted = try Subprocess.run(MockLogindNeeds.python, ["-c", script, address], environment: environment)
        #expect(emitted.status == 0, "\(emitted.stderr)")
    }
}

/// The vault locks when the user leaves: logind's PrepareForSleep(true) and a session's Lock.
@Suite(
    "The vault locks when the machine sleeps or the session locks", .serialized,
    .enabled(if: MockLogindNeeds.unavailableReason == nil, "\(MockLogindNeeds.unavailableReason ?? "")"))
struct LeavingLocksTests {
    /// A served vault unlocked by the user, with a stored secret; the serve hears `logind`.
    static func unlockedServe(_ served: ServedVault, _ logind: MockLogind) throws -> String {
        let file = try OneLockStateTests.freshPassphraseVault(served)
        #expect(try OneLockStateTests.keychain(served, ["unlock"], ["KEYCHAIN_PASSPHRASE_FILE": file]).status == 0)
        try served.startServing(environment: OneLockStateTests.keyring.merging(["DBUS_SYSTEM_BUS_ADDRESS": logind.address]) { $1 })
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value").status == 0)
        #expect(try OneLockStateTests.lookup(served).output == "value")
        return file
    }

    /// Waits (a bounded number of polls) for `keychain status` to say locked; whether it did.
    static func becomesLocked(_ served: ServedVault) throws -> Bool {
        for _ in 0..<100 {
            if try OneLockStateTests.keychain(served, ["status"]).output.contains("locked:            yes") { return true }
            usleep(50_000)
        }
        return false
    }

    @Test("logind's PrepareForSleep(true) locks the vault for every process; PrepareForSleep(false) does not unlock it")
    func suspendLocks() throws {
        let served = try ServedVault(serving: false)
        let logind = try MockLogind(in: served.directory)
        _ = try Self.unlockedServe(served, logind)
        try logind.prepareForSleep(true)
        #expect(try Self.becomesLocked(served), "still unlocked after PrepareForSleep(true): \(served.serveErrors)")
        #expect(try OneLockStateTests.lookup(served).output.isEmpty, "a secret after the suspend")
        try logind.prepareForSleep(false)
        #expect(try OneLockStateTests.lookup(served).output.isEmpty, "the resume unlocked it")
        #expect(served.serveErrors.contains("locked the vault: the machine is going to sleep"), "\(served.serveErrors)")
    }

    @Test("the session's Lock (loginctl lock-session) locks the vault for every process")
    func sessionLockLocks() throws {
        let served = try ServedVault(serving: false)
        let logind = try MockLogind(in: served.directory)
        _ = try Self.unlockedServe(served, logind)
        let added = try logind.send([
            "/org/freedesktop/login1", "--dest=org.freedesktop.login1", "org.freedesktop.DBus.Mock.AddSession", "string:c1", "string:seat0",
            "uint32:\(getuid())", "string:someone", "boolean:true",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let locked = try logind.send(["/org/freedesktop/login1/session/c1", "--dest=org.freedesktop.login1", "org.freedesktop.login1.Session.Lock"])
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(try Self.becomesLocked(served), "still unlocked after the session's Lock: \(served.serveErrors)")
        #expect(try OneLockStateTests.lookup(served).output.isEmpty, "a secret after the session locked")
    }
}
