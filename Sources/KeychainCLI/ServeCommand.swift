import KeychainCore
import KeychainServe
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain serve`: the vault as the session's Secret Service provider.
enum ServeCommand {
    static let command = Command(
        name: "serve", summary: "serve the vault to every program as the Secret Service (org.freedesktop.secrets on the session bus)",
        options: [
            .flag("replace", "take the name from the provider that owns it, where it lets another take it (another keychain serve; gnome-keyring, KWallet and KeePassXC do not)"),
            .flag("queue", "where the provider that owns the name does not let it go, wait in the bus's queue and serve from the moment it stops"),
            .flag(
                "install",
                "write the D-Bus activation file and a systemd user unit, so that the first Secret Service call starts keychain serve, make the running bus read them, take the name from another vault's keychain serve, say who the next call reaches; then exit"
            ),
            .value(
                "idle-exit", "SECONDS",
                "stop once no program has held a session or a prompt for SECONDS (0: never); default \(defaultIdleExit) when the bus or the systemd unit --install writes started it, never otherwise; with --install, the time the files start it with"
            ),
        ],
        examples: [
            "keychain serve &                      # then: secret-tool store --label=Token service api",
            "dbus-run-session -- sh -c 'keychain serve & sleep 1; secret-tool lookup service api'",
            "keychain serve --replace             # instead of another vault's keychain serve",
            "keychain serve --install             # started on demand from now on",
        ],
        notes:
            "Items other programs store (secret-tool, git-credential-libsecret, Python keyring...) go in the vault's login collection, the default; the session collection lives in memory until serve stops. Their secrets are whenUnlocked: while the vault is locked, programs see the items but no secret. With KEYCHAIN_PASSPHRASE_FILE (or a systemd credential) it unlocks the vault at start. Otherwise a program's unlock shows a pinentry (KEYCHAIN_PINENTRY, else pinentry on PATH) where one can be shown: on the desktop (DISPLAY, WAYLAND_DISPLAY), or on the terminal GPG_TTY names or serve runs in; the passphrase unlocks the vault as keychain unlock does. With nowhere to show one, the program's unlock ends as dismissed (it takes its own way on) and serve's log says to run keychain unlock. keychain lock locks it at once, as a suspend or a session lock does. Aliases programs set are kept in the vault. Runs until another provider replaces it; stops with SIGTERM. Started by the bus (D-Bus activation), it stops after 10 idle minutes and the next call starts it again.",
        run: run)

    private static func run(_ context: Context) throws(CommandFailure) -> ExitCode {
        if context.arguments.has("install") { return try install(context) }
        // Locked by a client (Service.Lock), it stays locked: the passphrase file opens it at start only.
        let vault = try context.vaultOnly("serve", unlockingAgainOnNeed: false)
        // A passphrase the environment gives (KEYCHAIN_PASSPHRASE_FILE, a systemd credential)
        // opens the vault for the daemon at start, as on a headless server; without one, it
        // serves what the user's own `keychain unlock` opens, or what a client's unlock opens
        // through a pinentry. It never reads a passphrase from its own standard input: a pinentry
        // asks, on the terminal or display it is told of.
        if PassphraseFile.isOffered(by: context.environment) { try context.ensureAvailable(.whenUnlocked) }
        if let named = context.environment["KEYCHAIN_PINENTRY"], !named.isEmpty, !named.hasPrefix("/") || !SystemCall.accessible(named, X_OK) {
            context.terminal.writeError("keychain: KEYCHAIN_PINENTRY (\(named)) is not the path of a program: programs' unlocks will end dismissed until keychain unlock\n")
        }
        let idleExit = try idleExit(context)
        let replace = context.arguments.has("replace")
        let queue = context.arguments.has("queue")
        let location = vault.location.path
        let why: String
        do {
            why = try SecretServiceProvider.serve(vault: vault, replace: replace, queue: queue, idleExit: idleExit) { queued in
                context.terminal.writeError(
                    queued
                        ? "keychain: waiting in the session bus's queue for org.freedesktop.secrets, to serve \(location) the moment its owner stops\n"
                        : "keychain: serving \(location) as org.freedesktop.secrets on the session bus\n")
            }
        } catch {
            switch error {
            case .store(let failure): throw CommandFailure(failure)
            case .nameTaken:
                // Who owns it, as the bus says: this vault's own keychain serve needs no second one.
                if let owner = try? SecretServiceOwner.current(), owner.serves(vault) {
                    throw CommandFailure(
                        "keychain serve of this vault (\(owner.processID.map { "process \($0)" } ?? owner.uniqueName)) already serves org.freedesktop.secrets on this session bus (keychain serve --replace takes its place)",
                        code: .failure)
                }
                throw CommandFailure(error.description, code: .failure)
            case .unavailable: throw CommandFailure(error.description, code: .failure)
            }
        }
        context.terminal.writeError("keychain: \(why)\n")
        return .success
    }

    /// Seconds an activated `keychain serve` waits idle before it stops (documented in the notes).
    static let defaultIdleExit = 600

    /// How long serve stays up with no client: `--idle-exit`, else ``defaultIdleExit`` when the
    /// bus started it (it sets DBUS_STARTER_BUS_TYPE for the programs it activates), else forever.
    private static func idleExit(_ context: Context) throws(CommandFailure) -> Duration? {
        if let seconds = try idleExitSeconds(context) { return seconds == 0 ? nil : .seconds(seconds) }
        return context.environment["DBUS_STARTER_BUS_TYPE"] == nil ? nil : .seconds(defaultIdleExit)
    }

    /// The seconds `--idle-exit` gives (0: never), or nil where it is not given.
    static func idleExitSeconds(_ context: Context) throws(CommandFailure) -> Int? {
        guard let given = context.arguments.value("idle-exit") else { return nil }
        guard let seconds = Int(given), seconds >= 0 else { throw CommandFailure("--idle-exit takes a whole number of seconds, not \(given)", code: .usage) }
        return seconds
    }

    private static func install(_ context: Context) throws(CommandFailure) -> ExitCode {
        let installed = try ServeSwitch.install(context)
        context.terminal.writeError("keychain: \(ServeSwitch.takeEffect(context, vault: try? context.vault(), installed: installed))\n")
        return .success
    }
}
