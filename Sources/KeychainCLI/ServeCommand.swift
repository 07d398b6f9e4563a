import KeychainCore
import KeychainServe

/// `keychain serve`: the vault as the session's Secret Service provider.
enum ServeCommand {
    static let command = Command(
        name: "serve", summary: "serve the vault to every program as the Secret Service (org.freedesktop.secrets on the session bus)",
        positionals: [], optionalPositionals: [],
        options: [.flag("replace", "take the name from the provider that owns it (gnome-keyring, another keychain serve)")],
        examples: [
            "keychain serve &                      # then: secret-tool store --label=Token service api",
            "dbus-run-session -- sh -c 'keychain serve & sleep 1; secret-tool lookup service api'",
            "keychain serve --replace             # instead of gnome-keyring",
        ],
        notes:
            "Items other programs store (secret-tool, git-credential-libsecret, Python keyring...) go in the vault's login collection, the default; the session collection lives in memory until serve stops. Their secrets are whenUnlocked: while the vault is locked, programs see the items but no secret. With KEYCHAIN_PASSPHRASE_FILE (or a systemd credential) it unlocks the vault at start. Runs until another provider replaces it; stops with SIGTERM.",
        run: run)

    private static func run(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("serve")
        // A passphrase the environment gives (KEYCHAIN_PASSPHRASE_FILE, a systemd credential)
        // opens the vault for the daemon at start, as on a headless server; without one, it
        // serves what the user's own `keychain unlock` opens. It never prompts: it has no terminal
        // of its own to prompt on once started.
        if PassphraseFile.isOffered(by: context.environment) { try context.ensureAvailable(.whenUnlocked) }
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
}
