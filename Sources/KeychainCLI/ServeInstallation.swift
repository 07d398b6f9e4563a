import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What `keychain serve --install` writes so that the first Secret Service call of a session
/// starts `keychain serve`: a D-Bus activation file in the user's `dbus-1/services` (which the
/// session bus reads before the system's, so it wins over gnome-keyring's), and a systemd user
/// unit that a bus run by `systemd --user` starts instead (`SystemdService=`).
struct ServeInstallation {
    static let unitName = "keychain-serve.service"

    let activationFile: String
    let unitFile: String
    let activation: String
    let unit: String

    /// The two files for the `keychain` at `executable` serving the vault at `vault` (nil: the
    /// default vault of the session that starts it), under the environment's data and
    /// configuration directories; `idleExit` is the `--idle-exit` given to the install, if any.
    /// - Throws: a usage failure for a path that the two file formats cannot carry as it is
    ///   (quotes, backslashes, `%`, control characters), or no home to install into.
    init(executable: String, vault: String?, idleExit: Int? = nil, environment: [String: String]) throws(CommandFailure) {
        func directory(_ variable: String, _ fallback: String) throws(CommandFailure) -> String {
            if let value = environment[variable], value.hasPrefix("/") { return value }
            guard let home = environment["HOME"], home.hasPrefix("/") else {
                throw CommandFailure("neither \(variable) nor HOME is set to an absolute path: nowhere to install", code: .usage)
            }
            return home + "/" + fallback
        }
        for path in [executable] + (vault.map { [$0] } ?? []) where path.unicodeScalars.contains(where: { "\"'\\%$`".unicodeScalars.contains($0) || $0.value < 0x20 }) {
            throw CommandFailure("\(path) holds a character that a D-Bus service file or a systemd unit would read differently; install from a plainer path", code: .usage)
        }
        let command = "\"\(executable)\" serve" + (vault.map { " --vault \"\($0)\"" } ?? "")
        // A bus activating `keychain serve` itself sets DBUS_STARTER_BUS_TYPE, which gives it
        // the idle exit of one started on demand; systemd starting the unit for the bus sets
        // nothing of the kind, so the unit names the time (else it would never stop).
        let unitCommand = command + " --idle-exit \(idleExit ?? ServeCommand.defaultIdleExit)"
        activationFile = try directory("XDG_DATA_HOME", ".local/share") + "/dbus-1/services/org.freedesktop.secrets.service"
        unitFile = try directory("XDG_CONFIG_HOME", ".config") + "/systemd/user/" + Self.unitName
        activation = """
            [D-BUS Service]
            Name=org.freedesktop.secrets
            Exec=\(command)\(idleExit.map { " --idle-exit \($0)" } ?? "")
            SystemdService=\(Self.unitName)

            """
        unit = """
            [Unit]
            Description=The keychain vault as the Secret Service (org.freedesktop.secrets)

            [Service]
            Type=dbus
            BusName=org.freedesktop.secrets
            ExecStart=\(unitCommand)

            [Install]
            WantedBy=default.target

            """
    }

    /// Writes both files (each replaced whole, atomically: a temporary file renamed over it),
    /// creating their directories (0700).
    func write() throws(CommandFailure) {
        for (path, text) in [(activationFile, activation), (unitFile, unit)] {
            do throws(Errno) {
                try FileSystem.createDirectory(FileSystem.parent(of: path))
                try FileSystem.replaceFile(path, mode: 0o644) { fd throws(Errno) in try SystemCall.writeAll(fd, text, path: path) }
            } catch {
                throw Self.failure(path, error)
            }
        }
    }

    /// Whether `path` lies where it will not stay: a build folder (`.build`, which `swift
    /// package clean` empties and a moved clone takes along) or a temporary directory.
    static func isTransient(_ path: String, environment: [String: String]) -> Bool {
        if path.split(separator: "/").contains(".build") { return true }
        let temporary = ["/tmp/", "/var/tmp/", "/dev/shm/"] + (environment["TMPDIR"].map { [$0.hasSuffix("/") ? $0 : $0 + "/"] } ?? [])
        return temporary.contains { $0.count > 1 && path.hasPrefix($0) }
    }

    /// Copies the program at `executable` to `keychain/serve/keychain` in the user's data
    /// directory (atomically: a temporary file renamed over the last copy), for the files to
    /// name a program that stays where it is; the copy's path.
    static func copyToStablePlace(_ executable: String, environment: [String: String]) throws(CommandFailure) -> String {
        let data: String
        if let value = environment["XDG_DATA_HOME"], value.hasPrefix("/") {
            data = value
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            data = home + "/.local/share"
        } else {
            throw CommandFailure("neither XDG_DATA_HOME nor HOME is set to an absolute path: nowhere to copy \(executable) to", code: .usage)
        }
        let destination = data + "/keychain/serve/keychain"
        let source: Int32
        do {
            source = try SystemCall.open(executable, O_RDONLY)
        } catch {
            throw CommandFailure("could not read \(executable): \(error.reason)", code: .failure)
        }
        defer { SystemCall.close(source) }
        do throws(Errno) {
            try FileSystem.createDirectory(FileSystem.parent(of: destination))
            try FileSystem.replaceFile(destination, mode: 0o755) { target throws(Errno) in
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = try buffer.withUnsafeMutableBytes { bytes in Result { () throws(Errno) in try SystemCall.read(source, into: bytes, path: executable) } }.get()
                    if count == 0 { break }
                    try buffer.withUnsafeBytes { bytes in
                        Result { () throws(Errno) in try SystemCall.writeAll(target, UnsafeRawBufferPointer(rebasing: bytes[..<count]), path: destination) }
                    }.get()
                }
            }
        } catch {
            throw failure(destination, error)
        }
        return destination
    }

    private static func failure(_ path: String, _ error: Errno) -> CommandFailure {
        CommandFailure("could not write \(path): \(error.description)", code: .failure)
    }

    /// The running `keychain`'s own path, as the files must name it.
    static var executable: String {
        FileSystem.ownExecutable ?? CommandLine.arguments[0]
    }
}
