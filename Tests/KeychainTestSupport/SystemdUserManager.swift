import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real systemd user manager (`systemd --user`) of the ordinary user's (``OrdinaryUser``), on a
/// machine whose process 1 is not systemd: started as root in a mount namespace of its own, where
/// an empty `/run/systemd/system` makes it believe the machine booted with systemd, inside a
/// control group of its own delegated to the user (named `user@UID.service`, as logind names a
/// user manager's), then dropping to the user. Its bus (`dbus.socket`, at `$XDG_RUNTIME_DIR/bus`)
/// and its units are the distribution's. Stops the manager (which stops its units) and removes
/// the control groups when released.
public final class SystemdUserManager {
    public static let managerProgram = "/lib/systemd/systemd"

    /// Why a user manager cannot be started here, or nil.
    public static let unavailableReason: String? = {
        if let reason = OrdinaryUser.unavailableReason { return reason }
        for tool in [managerProgram, "/usr/bin/unshare", "/usr/bin/systemctl", "/usr/bin/busctl", "/usr/bin/secret-tool"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is not installed (systemd, util-linux, libsecret-tools)"
        }
        for unit in ["dbus.socket", "gnome-keyring-daemon.service"] where !FileManager.default.fileExists(atPath: "/usr/lib/systemd/user/" + unit) {
            return "the user unit \(unit) is not installed (dbus-user-session, gnome-keyring)"
        }
        guard let root = cgroup2Root else { return "no cgroup2 hierarchy is mounted: a user manager needs one to run its units in" }
        let probe = root + "/keychain-test.probe.\(getpid())"
        guard mkdir(probe, 0o755) == 0 else { return "cannot make a control group in \(root) (\(String(cString: strerror(errno)))): no group to delegate to a user manager" }
        rmdir(probe)
        return nil
    }()

    /// Where the cgroup2 hierarchy is mounted: `/sys/fs/cgroup` alone, or `/sys/fs/cgroup/unified`
    /// beside the v1 controllers.
    private static let cgroup2Root: String? = {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count > 2 && fields[2] == "cgroup2" { return String(fields[1]) }
        }
        return nil
    }()

    public let directory = TemporaryDirectory()
    public let home: String
    public let runtime: String
    /// The user's copy of `keychain`.
    public let keychain: String
    /// The manager's own control group, and the one made above it.
    private let cgroup: String
    private let cgroupParent: String
    private let managerPID: pid_t
    private var stopped = false

    /// Starts the manager and waits until its `default.target` is active.
    public init() throws {
        guard let root = Self.cgroup2Root else { throw POSIXError(.ENOENT) }
        let (uid, gid) = try OrdinaryUser.ids()
        let base = directory.path
        OrdinaryUser.letTraverse(to: base)
        home = base + "/home"
        runtime = base + "/run"
        for folder in [home + "/data", home + "/config", home + "/bin", runtime] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        keychain = home + "/bin/keychain"
        try OrdinaryUserSession.copy(KeychainExecutable.path, to: keychain)
        for path in try [base] + FileManager.default.subpathsOfDirectory(atPath: base).map({ base + "/" + $0 }) { lchown(path, uid, gid) }
        chmod(runtime, 0o700)
        let parent = root + "/keychain-test.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let group = parent + "/user@\(uid).service"
        cgroupParent = parent
        cgroup = group
        guard mkdir(parent, 0o755) == 0 else { throw POSIXError(.EACCES) }
        guard mkdir(group, 0o755) == 0 else {
            rmdir(parent)
            throw POSIXError(.EACCES)
        }
        for path in try [group] + FileManager.default.contentsOfDirectory(atPath: group).map({ group + "/" + $0 }) { lchown(path, uid, gid) }
        let script =
            "mkdir -p /run/systemd && mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/system && echo $$ > \"$1/cgroup.procs\""
            + " && exec /usr/bin/setpriv --reuid=\(uid) --regid=\(gid) --clear-groups -- \(Self.managerProgram) --user --log-target=console"
        let launched: (pid: pid_t, stdin: Int32)
        do {
            launched = try Subprocess.launch(
                "/usr/bin/unshare", ["-m", "--propagation", "private", "/bin/sh", "-c", script, "sh", cgroup], environment: Self.environment(home: home, runtime: runtime),
                errorFile: base + "/manager.log")
        } catch {
            rmdir(group)
            rmdir(parent)
            throw error
        }
        close(launched.stdin)
        managerPID = launched.pid
        guard eventually(seconds: 20, { (try? systemctl(["is-active", "default.target"]))?.output == "active\n" }) else {
            stop()
            throw POSIXError(.ETIMEDOUT)
        }
    }

    deinit { stop() }

    /// Stops the manager (SIGTERM: it stops its units first), ends whatever still runs in its
    /// control group and removes the groups.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        kill(managerPID, SIGTERM)
        _ = Subprocess.wait(for: managerPID)
        for _ in 0..<100 {
            let groups = ((try? FileManager.default.subpathsOfDirectory(atPath: cgroupParent)) ?? []).map { cgroupParent + "/" + $0 }.filter {
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) && isFolder.boolValue
            }
            for group in groups + [cgroupParent] {
                for pid in ((try? String(contentsOfFile: group + "/cgroup.procs", encoding: .utf8)) ?? "").split(separator: "\n").compactMap({ pid_t($0) }) { kill(pid, SIGKILL) }
            }
            for group in groups.sorted(by: { $0.count > $1.count }) + [cgroupParent] { rmdir(group) }
            if access(cgroupParent, F_OK) != 0 { return }
            usleep(50_000)
        }
    }

    /// The user's `TMPDIR` is their home, which lies in the test's temporary directory: the
    /// `keychain` copied there is then one `serve --install` knows will not stay, wherever the
    /// test's process keeps its temporary files.
    private static func environment(home: String, runtime: String) -> [String: String] {
        [
            "PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
            "XDG_RUNTIME_DIR": runtime, "KEYCHAIN_KERNEL_KEYRING": "off",
        ]
    }

    /// The user's environment in a shell of theirs: no `DBUS_SESSION_BUS_ADDRESS`, so that every
    /// client finds the bus at `$XDG_RUNTIME_DIR/bus`, as in a login without the variable.
    public var environment: [String: String] { Self.environment(home: home, runtime: runtime) }

    /// Runs `executable` as the user.
    public func run(_ executable: String, _ arguments: [String], input: String = "") throws -> CommandResult {
        let (setpriv, wrapped) = OrdinaryUser.wrap(executable, arguments)
        return try Subprocess.run(setpriv, wrapped, environment: environment, input: Data(input.utf8))
    }

    /// `systemctl --user` as the user.
    public func systemctl(_ arguments: [String]) throws -> CommandResult { try run("/usr/bin/systemctl", ["--user"] + arguments) }

    /// One property of a unit (`MainPID`, `ActiveState`), as the manager says.
    public func property(_ property: String, of unit: String) -> String {
        ((try? systemctl(["show", "--property=\(property)", "--value", unit]))?.output ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The process that owns org.freedesktop.secrets on the user's bus; nil when none does.
    public func secretsOwner() -> pid_t? {
        guard
            let asked = try? run(
                "/usr/bin/busctl",
                ["--user", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", "org.freedesktop.secrets"]),
            asked.status == 0
        else { return nil }
        return asked.output.split(separator: " ").last.flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}
