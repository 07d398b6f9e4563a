import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The systemd user service that keeps one vault's sync agent running where systemd runs the
/// user's session: `keychain-sync-<id>.service` in the user's unit directory, enabled and
/// started by `sync init` and `join`, one per vault (the id is derived from the vault's path).
/// A vault with a passphrase gets one only with a passphrase file, handed to the service as a
/// systemd credential (``PassphraseSource``): started at login, it has no one to ask.
struct SystemdUserUnit {
    let name: String
    let directory: String
    let contents: String

    /// How the service's agent opens the vault: it needs nothing (no passphrase), it reads the
    /// passphrase file as the credential `keychain-passphrase` (`LoadCredential=`, which sets
    /// the `CREDENTIALS_DIRECTORY` the agent reads), or no service is installed, and why.
    enum PassphraseSource: Equatable {
        case notNeeded
        case credential(file: String)
        case refused(why: String)

        /// What a vault with `hasPassphrase` gets from `environment` (`KEYCHAIN_PASSPHRASE_FILE`).
        init(vaultHasPassphrase hasPassphrase: Bool, environment: [String: String]) {
            guard hasPassphrase else {
                self = .notNeeded
                return
            }
            guard let file = environment["KEYCHAIN_PASSPHRASE_FILE"], !file.isEmpty else {
                self = .refused(
                    why:
                        "the vault has a passphrase and a service started at login has no one to ask it of; give KEYCHAIN_PASSPHRASE_FILE to init or join to have the service read that file as a systemd credential"
                )
                return
            }
            self = .credential(file: VaultLocation(path: file).path)
        }
    }

    /// The unit of the vault at `location`, run by `executable`; nil when `environment` shows
    /// no systemd user manager (no `XDG_RUNTIME_DIR/systemd/private`: containers, most CI, a
    /// login without systemd).
    init?(vault location: VaultLocation, executable: String, environment: [String: String], passphraseFile: String? = nil) {
        guard Self.userManagerRuns(environment) else { return nil }
        let home = environment["HOME"] ?? ""
        let configuration = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        guard configuration.hasPrefix("/") else { return nil }
        self.init(vault: location, executable: executable, directory: configuration + "/systemd/user", passphraseFile: passphraseFile)
    }

    /// Whether `environment` shows a systemd user manager (`XDG_RUNTIME_DIR/systemd/private`).
    static func userManagerRuns(_ environment: [String: String]) -> Bool {
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return false }
        return SystemCall.accessible(runtime + "/systemd/private", F_OK)
    }

    init(vault location: VaultLocation, executable: String, directory: String, passphraseFile: String? = nil) {
        let id = Self.pathID(Array(location.path.utf8))
        name = "keychain-sync-\(id).service"
        self.directory = directory
        contents = """
            [Unit]
            Description=keychain sync agent for \(Self.escaped(location.path, variables: false))
            Documentation=man:keychain(1)
            Wants=network-online.target
            After=network-online.target

            [Service]
            Type=simple
            ExecStart=\(Self.quoted(executable)) sync run --vault \(Self.quoted(location.path))
            Environment=KEYCHAIN_SYNC_AGENT=off
            \(passphraseFile.map { "LoadCredential=keychain-passphrase:" + Self.escaped($0, variables: false) + "\n" } ?? "")Restart=on-failure
            RestartSec=30

            [Install]
            WantedBy=default.target

            """
    }

    /// Writes the unit (atomically: a temporary file renamed over it), reloads the user
    /// manager and enables and starts the service. Why it failed, or nil.
    func install() -> String? {
        let path = directory + "/" + name
        do {
            try FileSystem.createDirectory(directory)
            try FileSystem.replaceFile(path, mode: 0o644) { fd throws(Errno) in try SystemCall.writeAll(fd, contents, path: path) }
        } catch {
            return "cannot write \(path): \(error.description)"
        }
        for arguments in [["--user", "daemon-reload"], ["--user", "enable", "--now", name]] {
            guard let status = ChildProcess.run(["systemctl"] + arguments), status == 0 else { return "systemctl \(arguments.joined(separator: " ")) failed" }
        }
        return nil
    }

    /// Stops, disables and removes the unit if it is installed (after `sync leave`: a
    /// service left behind would restart an agent with nothing to sync). Whether it was there.
    @discardableResult
    func uninstall() -> Bool {
        let path = directory + "/" + name
        guard SystemCall.accessible(path, F_OK) else { return false }
        _ = ChildProcess.run(["systemctl", "--user", "disable", "--now", name])
        try? SystemCall.unlink(path)
        _ = ChildProcess.run(["systemctl", "--user", "daemon-reload"])
        return true
    }

    /// A word of a systemd command line: quoted, with `\`, `"`, `%` and `$` escaped as
    /// systemd.service(5) and systemd.unit(5) say.
    static func quoted(_ word: String) -> String { "\"" + escaped(word, quotes: true) + "\"" }

    /// Text in a unit file: `%` as `%%` (a specifier otherwise), control characters dropped,
    /// and on a command line (`variables`) `\` doubled and `$` as `$$` (a variable otherwise).
    static func escaped(_ text: String, variables: Bool = true, quotes: Bool = false) -> String {
        var out = ""
        for character in text where !(character.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) {
            switch character {
            case "\\" where variables: out += "\\\\"
            case "%": out += "%%"
            case "$" where variables: out += "$$"
            case "\"" where quotes: out += "\\\""
            default: out.append(character)
            }
        }
        return out
    }

    /// A short stable id of a vault's path (FNV-1a, 64 bits, in hex): a unit name needs no
    /// secrecy, only one name per vault.
    private static func pathID(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
