import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The login's commands: `keychain pam`, which the PAM module runs as the user with the login
/// password on standard input (docs/login.md), and `keychain bus`, the user's session bus at
/// `$XDG_RUNTIME_DIR/bus` where no systemd user manager and no PAM session step starts one.
enum LoginCommands {
    static let all: [Command] = [
        Command(
            name: "pam", summary: "the PAM module's helper: unlock at login, start the session bus, follow a password change",
            positionals: ["STEP"],
            examples: ["keychain pam auth   # as pam_keychain.so runs it at session open, the password on a socket (docs/login.md)"],
            notes:
                "auth (which the module runs from its session step, after the login accepted the password): unlocks your vault with the login password on standard input for your processes, as keychain unlock does (a user without a vault gets one with that passphrase, and keychain serve installed for their sessions); a vault without a passphrase is left as it is. session: as keychain bus. password: old and new password on standard input, each ended by a NUL byte; the vault's passphrase follows when it was the old password. Standard input must not be a terminal.",
            run: pam, positionalChoices: ["auth", "session", "password"]),
        Command(
            name: "bus", summary: "start your session bus at $XDG_RUNTIME_DIR/bus (where libsecret looks) unless one answers there",
            examples: ["keychain bus"],
            notes:
                "For logins without systemd's user manager and without the PAM module's session step (which does the same): every later shell of yours with XDG_RUNTIME_DIR set finds the bus, and through it keychain serve, with no DBUS_SESSION_BUS_ADDRESS. The bus runs until it is stopped or the machine restarts.",
            run: bus),
    ]

    /// The longest login password passed on (PAM's PAM_MAX_RESP_SIZE), with the NULs of `password`.
    static let passwordLimit = 2 * 512 + 2

    private static func pam(_ context: Context) throws(CommandFailure) -> ExitCode {
        let step = context.arguments.positionals[0]
        guard ["auth", "session", "password"].contains(step) else {
            throw CommandFailure("pam takes auth, session or password, not '\(step)'", code: .usage)
        }
        if step == "session" { return try startBus(context) }
        guard !SystemCall.isTerminal(STDIN_FILENO) else {
            throw CommandFailure("keychain pam \(step) is run by the PAM module with the password on standard input (docs/login.md)", code: .usage)
        }
        let input = try context.terminal.readAll(STDIN_FILENO, limit: passwordLimit, what: "standard input")
        let vault = try context.vaultOnly("pam")
        if step == "auth" {
            guard input.count > 0, !input.withUnsafeBytes({ $0.contains(0) }) else { throw CommandFailure("no password on standard input", code: .usage) }
            if !vault.status().exists {
                try context.store { () throws(StoreError) in try vault.changePassphrase(from: nil, to: input) }
                // The user's programs find it from the first login on (where no provider of
                // their own is installed).
                if let installation = try? ServeInstallation(executable: ServeInstallation.executable, vault: nil, environment: context.environment),
                    !SystemCall.accessible(installation.activationFile, F_OK)
                {
                    try? installation.write()
                }
            }
            guard vault.hasPassphrase else { return .success }
            try context.store { () throws(StoreError) in try vault.unlock(forUser: input) }
            return .success
        }
        let parts = input.withUnsafeBytes { bytes in bytes.split(separator: 0, omittingEmptySubsequences: false) }
        guard parts.count == 3, parts[2].isEmpty, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw CommandFailure("pam password takes the old and the new password, each ended by a NUL byte", code: .usage)
        }
        let old = SecretBytes(UnsafeRawBufferPointer(rebasing: parts[0]))
        let new = SecretBytes(UnsafeRawBufferPointer(rebasing: parts[1]))
        guard vault.status().exists, vault.hasPassphrase else { return .success }
        try context.store { () throws(StoreError) in try vault.changePassphrase(from: old, to: new) }
        return .success
    }

    private static func bus(_ context: Context) throws(CommandFailure) -> ExitCode {
        try startBus(context)
    }

    /// Starts `dbus-daemon --session` at `$XDG_RUNTIME_DIR/bus` unless a bus answers there.
    private static func startBus(_ context: Context) throws(CommandFailure) -> ExitCode {
        guard let runtime = context.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
            throw CommandFailure("XDG_RUNTIME_DIR is not set: there is no place for your bus (a login through PAM sets it)", code: .failure)
        }
        guard let info = try? SystemCall.lstat(runtime), (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw CommandFailure("\(runtime) is not a directory of yours that only you can use (0700): no bus there", code: .failure)
        }
        let socket = runtime + "/bus"
        switch BusSocket.probe(socket) {
        case .answers: return .success
        case .stale:
            do { try SystemCall.unlink(socket) } catch { throw CommandFailure("could not remove the dead bus socket \(socket): \(error.reason)", code: .failure) }
        case .absent: break
        case .foreign(let why): throw CommandFailure("\(socket) \(why): no bus started", code: .failure)
        }
        let installed: [String] = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"]
        guard let daemon = installed.first(where: { SystemCall.accessible($0, X_OK) }) else {
            throw CommandFailure("dbus-daemon is not installed (Debian: apt-get install dbus-daemon)", code: .failure)
        }
        guard
            let pid = ChildProcess.start(
                [daemon, "--session", "--address=unix:path=\(socket)", "--fork", "--nopidfile", "--nosyslog"], environment: context.environment, quiet: true,
                newSession: true)
        else { throw CommandFailure("could not start \(daemon)", code: .failure) }
        guard (try? SystemCall.waitpid(pid)) == 0, case .answers = BusSocket.probe(socket) else {
            throw CommandFailure("dbus-daemon did not start a bus at \(socket)", code: .failure)
        }
        return .success
    }
}
