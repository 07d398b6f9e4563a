import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain serve` on a private session bus of a test's own (no gnome-keyring on it), over a
/// vault in a temporary home: what real clients (secret-tool, Python secretstorage) are run
/// against. Stops exactly the processes it started.
public final class ServedVault: @unchecked Sendable {
    public let directory = TemporaryDirectory()
    public let busAddress: String
    private let busPID: pid_t
    /// The running `keychain serve`, or 0.
    public private(set) var servePID: pid_t = 0

    /// Why a private bus and `secret-tool` cannot be had here, or nil.
    public static let unavailableReason: String? = {
        for tool in ["dbus-daemon", "dbus-send", "secret-tool"] where !FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) {
            return "\(tool) is not installed (apt-get install dbus libsecret-tools)"
        }
        return nil
    }()

    /// Starts the bus and, unless `serving` is false, `keychain serve` on it.
    public init(serving: Bool = true) throws {
        // A bus whose only service directory is the test home's: nothing (gnome-keyring above
        // all) is started on demand but what `keychain serve --install` puts there.
        let configuration =
            "<busconfig><type>session</type><listen>unix:path=\(directory.path)/bus</listen>"
            + "<servicedir>\(directory.path)/data/dbus-1/services</servicedir>"
            + "<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/><allow own=\"*\"/></policy>"
            // A session bus's own limits (dbus's session.conf): the defaults without them (512
            // match rules, 128 replies per connection) fail a client that reads hundreds of
            // items at once, as `secret-tool search --all` does, on the bus, not in the daemon.
            + "<limit name=\"max_match_rules_per_connection\">50000</limit><limit name=\"max_replies_per_connection\">50000</limit></busconfig>\n"
        try configuration.write(toFile: directory.path + "/bus.conf", atomically: true, encoding: .utf8)
        let started = try Subprocess.run(
            "/usr/bin/dbus-daemon", ["--config-file=\(directory.path)/bus.conf", "--fork", "--print-address=1", "--print-pid=1"],
            environment: Self.environment(home: directory.path))
        let lines = started.output.split(separator: "\n")
        guard started.status == 0, lines.count >= 2, let pid = pid_t(lines[1]) else { throw POSIXError(.ECHILD) }
        busAddress = String(lines[0])
        busPID = pid
        try FileManager.default.createDirectory(atPath: directory.path + "/data", withIntermediateDirectories: true)
        if serving {
            try startServing()
            guard waitForProvider() else { throw POSIXError(.ETIMEDOUT) }
        }
    }

    deinit {
        stopServing()
        kill(busPID, SIGTERM)
        // The bus removes its socket as it exits; its directory goes after that, not beside it
        // (which left the directory behind now and then). Not our child: it is polled.
        for _ in 0..<200 where kill(busPID, 0) == 0 { usleep(10_000) }
    }

    /// What a client process needs: the bus, and a home of the test's own.
    public var environment: [String: String] {
        Self.environment(home: directory.path).merging(["DBUS_SESSION_BUS_ADDRESS": busAddress]) { $1 }
    }

    /// A home of the test's own (what the bus passes on to the programs it starts, too).
    private static func environment(home: String) -> [String: String] {
        [
            "PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
            "KEYCHAIN_KERNEL_KEYRING": "off", "XDG_RUNTIME_DIR": home,
        ]
    }

    /// The vault `keychain serve` serves.
    public var vaultPath: String { directory.path + "/data/keychain/default.keychain" }

    /// Starts `keychain serve` with `arguments` and `extra` in its environment; its standard
    /// error goes to `serve.err`.
    @discardableResult
    public func startServing(_ arguments: [String] = [], environment extra: [String: String] = [:]) throws -> pid_t {
        let launched = try Subprocess.launch(
            KeychainExecutable.path, ["serve"] + arguments, environment: environment.merging(extra) { $1 }, errorFile: directory.path + "/serve.err")
        close(launched.stdin)
        servePID = launched.pid
        return launched.pid
    }

    /// Stops the running `keychain serve` and waits for it; its exit status.
    @discardableResult
    public func stopServing() -> Int32 {
        guard servePID != 0 else { return 0 }
        kill(servePID, SIGTERM)
        defer { servePID = 0 }
        return Subprocess.wait(for: servePID)
    }

    /// What `keychain serve` wrote to its standard error.
    public var serveErrors: String { (try? String(contentsOfFile: directory.path + "/serve.err", encoding: .utf8)) ?? "" }

    /// Waits until something owns org.freedesktop.secrets (a bounded number of polls); whether it does.
    public func waitForProvider() -> Bool {
        for _ in 0..<400 {
            let asked = try? Subprocess.run(
                "/usr/bin/dbus-send",
                ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
                environment: environment)
            if asked?.output.contains("boolean true") == true { return true }
            usleep(25_000)
        }
        return false
    }

    /// Runs a client program against the served vault.
    public func run(_ executable: String, _ arguments: [String], input: String = "") throws -> CommandResult {
        try Subprocess.run(executable, arguments, environment: environment, input: Data(input.utf8))
    }
}
