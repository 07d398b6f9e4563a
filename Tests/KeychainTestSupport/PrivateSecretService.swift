import Foundation

/// A Secret Service of a test's own (scripts/secret-service.sh), for failure modes that must
/// not disturb the shared one: locking its collection, killing or freezing its daemon.
public final class PrivateSecretService: @unchecked Sendable {
    public let directory: String
    public let busAddress: String
    public let keyringPID: Int32

    /// The repository's scripts directory, found from this file's path.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/secret-service.sh").standardized.path

    /// Why a private Secret Service cannot be started here, or nil.
    public static let unavailableReason: String? = {
        for tool in ["dbus-daemon", "dbus-send", "gnome-keyring-daemon", "secret-tool"] {
            if !["/usr/bin/", "/bin/", "/usr/local/bin/"].contains(where: { FileManager.default.isExecutableFile(atPath: $0 + tool) }) {
                return "\(tool) is not installed (apt-get install dbus gnome-keyring libsecret-tools)"
            }
        }
        return nil
    }()

    public init() throws {
        let started = try Subprocess.run("/bin/bash", [Self.script, "start"], environment: ["PATH": "/usr/bin:/bin"])
        let text = started.output
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst(7).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            values[String(pair[0])] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        guard started.status == 0, let bus = values["DBUS_SESSION_BUS_ADDRESS"], let dir = values["SECRET_SERVICE_DIR"],
            let pid = values["SECRET_SERVICE_KEYRING_PID"].flatMap(Int32.init)
        else {
            throw CocoaError(.executableLoad)
        }
        busAddress = bus
        directory = dir
        keyringPID = pid
    }

    deinit { stop() }

    public func stop() {
        kill(keyringPID, SIGCONT)
        _ = try? Subprocess.run("/bin/bash", [Self.script, "stop", directory], environment: ["PATH": "/usr/bin:/bin"])
    }

    /// Locks the default ('login') collection through the Secret Service API, as a desktop's
    /// lock command does.
    public func lockDefaultCollection() throws {
        _ = try Subprocess.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
            ],
            environment: ["DBUS_SESSION_BUS_ADDRESS": busAddress])
    }

    /// The environment that points a process at this Secret Service.
    public var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": busAddress, "KEYCHAIN_BACKEND": "secret-service", "XDG_RUNTIME_DIR": directory + "/run"]
    }
}
