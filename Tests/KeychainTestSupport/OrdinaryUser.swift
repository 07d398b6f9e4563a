import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An unprivileged user of the machine's own (created once, as root: CI runs as root), for
/// what must be proven as the user who meets it: a daemon that is not dumpable hides its
/// `/proc` entries from its own user, never from root.
public enum OrdinaryUser {
    public static let name = "keychain-switch"

    /// Why commands cannot be run as an ordinary user here, or nil.
    public static let unavailableReason: String? = {
        guard geteuid() == 0 else { return "needs root to create an ordinary user and run commands as it (CI runs as root)" }
        for tool in ["/usr/bin/setpriv", "/usr/sbin/useradd"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is not installed (util-linux, passwd)"
        }
        return nil
    }()

    /// The user's ids, creating the user first where missing.
    public static func ids() throws -> (uid: uid_t, gid: gid_t) {
        if getpwnam(name) == nil {
            let made = try Subprocess.run(
                "/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], environment: ["PATH": "/usr/sbin:/usr/bin:/bin"])
            // Another suite of this run may have made it meanwhile.
            guard made.status == 0 || getpwnam(name) != nil else { throw POSIXError(.EPERM) }
        }
        guard let entry = getpwnam(name) else { throw POSIXError(.ENOENT) }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Lets every user pass through the folders above `path` (traversal only, no listing), so
    /// that a user of a test's own reaches what the test made there: CI's temporary folders sit
    /// below one only root may enter.
    public static func letTraverse(to path: String) {
        var parent = (path as NSString).deletingLastPathComponent
        while parent != "/" && !parent.isEmpty {
            var info = stat()
            if stat(parent, &info) == 0 && info.st_mode & S_IXOTH == 0 { chmod(parent, (info.st_mode & 0o7777) | S_IXOTH) }
            parent = (parent as NSString).deletingLastPathComponent
        }
    }

    /// `setpriv` running `executable` as the user, with no supplementary groups.
    public static func wrap(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        ("/usr/bin/setpriv", ["--reuid=\(name)", "--regid=\(name)", "--clear-groups", "--", executable] + arguments)
    }
}

/// A session of the ordinary user's own: a home, a private session bus and a copy of the
/// `keychain` command (the build folder may be closed to other users), all owned by the user,
/// and every process run as the user. Stops exactly the processes it started.
public final class OrdinaryUserSession: @unchecked Sendable {
    public let directory = TemporaryDirectory()
    public let busAddress: String
    /// The user's copy of `keychain`.
    public let keychain: String
    private let busPID: pid_t
    /// The running `keychain serve`, or 0.
    public private(set) var servePID: pid_t = 0

    /// Starts the bus; `systemProvider`, when given, makes the `Exec=` line (from the user's
    /// `keychain` and home) of an activation file in the bus's second service directory, below
    /// the user's: the machine's own provider (gnome-keyring's file in
    /// `/usr/share/dbus-1/services` on a desktop).
    public init(systemProvider: ((_ keychain: String, _ home: String) -> String)? = nil) throws {
        let (uid, gid) = try OrdinaryUser.ids()
        OrdinaryUser.letTraverse(to: directory.path)
        let home = directory.path
        for folder in ["data", "config", "bin", "system-services"] { try FileManager.default.createDirectory(atPath: home + "/" + folder, withIntermediateDirectories: true) }
        keychain = home + "/bin/keychain"
        try Self.copy(KeychainExecutable.path, to: keychain)
        let configuration =
            "<busconfig><type>session</type><listen>unix:path=\(home)/bus</listen>"
            + "<servicedir>\(home)/data/dbus-1/services</servicedir><servicedir>\(home)/system-services</servicedir>"
            + "<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n"
        try configuration.write(toFile: home + "/bus.conf", atomically: true, encoding: .utf8)
        if let systemProvider {
            try "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=\(systemProvider(keychain, home))\n".write(
                toFile: home + "/system-services/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        }
        for path in try [home] + FileManager.default.subpathsOfDirectory(atPath: home).map({ home + "/" + $0 }) { lchown(path, uid, gid) }
        chmod(home, 0o700)
        let (setpriv, arguments) = OrdinaryUser.wrap("/usr/bin/dbus-daemon", ["--config-file=\(home)/bus.conf", "--fork", "--print-address=1", "--print-pid=1"])
        let started = try Subprocess.run(setpriv, arguments, environment: Self.environment(home: home))
        let lines = started.output.split(separator: "\n")
        guard started.status == 0, lines.count >= 2, let pid = pid_t(lines[1]) else { throw POSIXError(.ECHILD) }
        busAddress = String(lines[0])
        busPID = pid
    }

    /// Copies a program with descriptors closed on exec: a program started meanwhile by a
    /// test running beside this one must not hold the copy open for writing (its exec would
    /// then fail with "text file busy").
    static func copy(_ source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw POSIXError(.ENOENT) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard output >= 0 else { throw POSIXError(.EEXIST) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return }
            guard count > 0, buffer.withUnsafeBytes({ write(output, $0.baseAddress, count) }) == count else { throw POSIXError(.EIO) }
        }
    }

    deinit {
        stopServing()
        kill(busPID, SIGTERM)
        for _ in 0..<200 where kill(busPID, 0) == 0 { usleep(10_000) }
    }

    private static func environment(home: String) -> [String: String] {
        [
            "PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
            "KEYCHAIN_KERNEL_KEYRING": "off", "XDG_RUNTIME_DIR": home, "TMPDIR": home,
        ]
    }

    /// The user's environment: the home and the bus.
    public var environment: [String: String] {
        Self.environment(home: directory.path).merging(["DBUS_SESSION_BUS_ADDRESS": busAddress]) { $1 }
    }

    /// The vault of the user's default location.
    public var vaultPath: String { directory.path + "/data/keychain/default.keychain" }

    /// Runs `executable` as the user.
    public func run(_ executable: String, _ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> CommandResult {
        let (setpriv, wrapped) = OrdinaryUser.wrap(executable, arguments)
        return try Subprocess.run(setpriv, wrapped, environment: environment.merging(extra) { $1 }, input: Data(input.utf8))
    }

    /// Runs the user's `keychain` as the user.
    public func keychain(_ arguments: [String], input: String = "") throws -> CommandResult { try run(keychain, arguments, input: input) }

    /// Starts `keychain serve` as the user (`setpriv` becomes it: the process id is the daemon's).
    @discardableResult
    public func startServing(_ arguments: [String] = []) throws -> pid_t {
        let (setpriv, wrapped) = OrdinaryUser.wrap(keychain, ["serve"] + arguments)
        let launched = try Subprocess.launch(setpriv, wrapped, environment: environment, errorFile: "/dev/null")
        close(launched.stdin)
        servePID = launched.pid
        return launched.pid
    }

    /// Stops the running `keychain serve` and waits for it.
    public func stopServing() {
        guard servePID != 0 else { return }
        kill(servePID, SIGTERM)
        _ = Subprocess.wait(for: servePID)
        servePID = 0
    }

    /// The process that owns org.freedesktop.secrets, as the bus says; nil when none does.
    public func ownerProcessID() -> pid_t? {
        let asked = try? run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"])
        guard asked?.status == 0 else { return nil }
        return asked?.output.split(separator: " ").last.flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The vault path the owner says it serves (keychain serve's own property), or nil.
    public func servedVaultPath() -> String? {
        let asked = try? run("/usr/bin/dbus-send", SecretServiceProperty.get("VaultPath", of: "keychain.Serve", at: "/org/freedesktop/secrets"))
        guard let asked, asked.status == 0 else { return nil }
        return SecretServiceProperty.string(in: asked.output)
    }

    /// Whether the name has an owner, asked of the bus (never activating it).
    public func nameHasOwner() -> Bool {
        let asked = try? run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"])
        return asked?.output.contains("boolean true") == true
    }

    /// Waits (a bounded number of polls) until something owns org.freedesktop.secrets.
    public func waitForProvider() -> Bool {
        for _ in 0..<400 {
            if nameHasOwner() { return true }
            usleep(25_000)
        }
        return false
    }
}
