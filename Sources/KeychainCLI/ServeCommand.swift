import KeychainCore
import KeychainServe

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain serve`: the vault as the session's Secret Service provider.
enum ServeCommand {
    static let command = Command(
        name: "serve", summary: "serve the vault to every program as the Secret Service (org.freedesktop.secrets on the session bus)",
        options: [
            .flag("replace", "take the name from the provider that owns it (gnome-keyring, another keychain serve)"),
            .flag("install", "write the D-Bus activation file and a systemd user unit, so that the first Secret Service call starts keychain serve; then exit"),
        ],
        examples: [
            "keychain serve &                      # then: secret-tool store --label=Token service api",
            "dbus-run-session -- sh -c 'keychain serve & sleep 1; secret-tool lookup service api'",
            "keychain serve --replace             # instead of gnome-keyring",
            "keychain serve --install             # started on demand from now on",
        ],
        notes:
            "Items other programs store (secret-tool, git-credential-libsecret, Python keyring...) go in the vault's login collection, the default; the session collection lives in memory until serve stops. Their secrets are whenUnlocked: while the vault is locked, programs see the items but no secret. With KEYCHAIN_PASSPHRASE_FILE (or a systemd credential) it unlocks the vault at start. Otherwise a program's unlock shows a pinentry (KEYCHAIN_PINENTRY, else pinentry on PATH) where one can be shown: on the desktop (DISPLAY, WAYLAND_DISPLAY), or on the terminal GPG_TTY names or serve runs in; the passphrase unlocks the vault as keychain unlock does. With nowhere to show one, the program's unlock ends as dismissed (it takes its own way on) and serve's log says to run keychain unlock. keychain lock locks it at once, as a suspend or a session lock does. Aliases programs set are kept in the vault. Runs until another provider replaces it; stops with SIGTERM.",
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
        if let named = context.environment["KEYCHAIN_PINENTRY"], !named.isEmpty, !named.hasPrefix("/") || access(named, X_OK) != 0 {
            context.terminal.writeError("keychain: KEYCHAIN_PINENTRY (\(named)) is not the path of a program: programs' unlocks will end dismissed until keychain unlock\n")
        }
        let replace = context.arguments.has("replace")
        let location = vault.location.path
        let why: String
        do {
            why = try SecretServiceProvider.serve(vault: vault, replace: replace) {
                context.terminal.writeError("keychain: serving \(location) as org.freedesktop.secrets on the session bus\n")
            }
        } catch {
            switch error {
            case .store(let failure): throw CommandFailure(failure)
            case .nameTaken: throw CommandFailure(error.description, code: .failure)
            case .unavailable: throw CommandFailure(error.description, code: .failure)
            }
        }
        context.terminal.writeError("keychain: \(why)\n")
        return .success
    }

    private static func install(_ context: Context) throws(CommandFailure) -> ExitCode {
        guard try context.storeKind() == .vault else { throw CommandFailure("serve --install serves the vault; --backend secret-service is the provider itself", code: .usage) }
        // A vault chosen by --vault or KEYCHAIN_PATH is named in the files; the default one is
        // found as every command finds it, in the environment of the session that starts it.
        let chosen = context.arguments.value("vault") != nil || context.environment["KEYCHAIN_PATH"] != nil
        let installation = try ServeInstallation(
            executable: ServeInstallation.executable, vault: chosen ? try context.location.path : nil, environment: context.environment)
        try installation.write()
        context.terminal.writeError(
            "keychain: wrote \(installation.activationFile) and \(installation.unitFile); the next Secret Service call of a session starts keychain serve (systemctl --user daemon-reload first, where systemd runs the session)\n"
        )
        return .success
    }
}
