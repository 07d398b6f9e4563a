import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// KeePassXC as the Secret Service on a private session bus of a test's own
/// (scripts/keepassxc.sh): one database per label, the first the default alias's, each opened
/// with ``password``, headless (Qt's offscreen platform: no X server). Stops exactly the
/// processes it started.
public final class PrivateKeePassXC: Sendable {
    public let directory: String
    public let busAddress: String
    public let keepassxcPID: Int32
    /// What opens every database.
    public static let password = "keepassxc-test-password"

    /// The repository's script, found from this file's path.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/keepassxc.sh").standardized.path

    /// Why KeePassXC cannot be started here, or nil.
    public static let unavailableReason: String? = {
        for tool in ["dbus-daemon", "dbus-send", "keepassxc", "keepassxc-cli"] where !FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) {
            return "\(tool) is not installed (apt-get install dbus keepassxc)"
        }
        return nil
    }()

    /// Starts KeePassXC with one database per label.
    public init(_ labels: [String] = ["Passwords"]) throws {
        let directory = TemporaryDirectory()
        // The script makes the folder it is given; this one only names a place for it.
        let place = directory.path + "/keepassxc"
        let started = try Subprocess.run(
            "/bin/bash", [Self.script, "start", place] + labels,
            environment: ["PATH": "/usr/bin:/bin", "KEEPASSXC_PASSWORD": Self.password, "TMPDIR": directory.path])
        var values: [String: String] = [:]
        for line in started.output.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst(7).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            values[String(pair[0])] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        guard started.status == 0, let bus = values["DBUS_SESSION_BUS_ADDRESS"], let pid = values["KEEPASSXC_PID"].flatMap(Int32.init) else {
            throw KeePassXCDidNotStart(output: started.stderr)
        }
        self.directory = place
        self.holder = directory
        busAddress = bus
        keepassxcPID = pid
    }

    /// Keeps the temporary folder (removed after `stop`).
    private let holder: TemporaryDirectory

    deinit { stop() }

    public func stop() {
        _ = try? Subprocess.run("/bin/bash", [Self.script, "stop", directory], environment: ["PATH": "/usr/bin:/bin"])
    }

    /// The path of the database file behind the `index`th label (from 1).
    public func databasePath(_ index: Int) -> String { directory + "/databases/db\(index).kdbx" }

    /// Opens a locked database again with its password, through KeePassXC's own D-Bus interface
    /// (what `keepassxc --pw-stdin` does for a database not open yet).
    public func unlock(_ index: Int) throws -> CommandResult {
        try Subprocess.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.keepassxc.KeePassXC.MainWindow", "/keepassxc", "org.keepassxc.KeePassXC.MainWindow.openDatabase",
                "string:\(databasePath(index))", "string:\(Self.password)",
            ],
            environment: ["DBUS_SESSION_BUS_ADDRESS": busAddress])
    }
}

/// The script's complaint when KeePassXC did not come up.
public struct KeePassXCDidNotStart: Error, CustomStringConvertible {
    public let output: String
    public var description: String { "scripts/keepassxc.sh did not start KeePassXC: \(output)" }
}
