import FoundationEssentials
import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a command runs with: the environment, the terminal, and the vault it opens on demand.
final class Context {
    let environment: [String: String]
    let terminal = Terminal()
    let arguments: ParsedArguments
    private(set) var openedVault: Vault?

    init(environment: [String: String], arguments: ParsedArguments) {
        self.environment = environment
        self.arguments = arguments
    }

    var passphrases: Passphrases { Passphrases(environment: environment, terminal: terminal) }

    /// `--vault`, else `KEYCHAIN_PATH`, else the default location.
    var location: VaultLocation {
        get throws(CommandFailure) {
            if let path = arguments.value("vault") {
                guard !path.isEmpty else { throw CommandFailure("--vault is empty: give the vault file's path", code: .usage) }
                return VaultLocation(path: path)
            }
            return .default(environment: environment)
        }
    }

    /// `path` as an absolute path (relative to the working directory); empty is a usage error.
    func absolutePath(_ path: String) throws(CommandFailure) -> String {
        guard !path.isEmpty else { throw CommandFailure("the file name is empty", code: .usage) }
        return VaultLocation(path: path).path
    }

    /// `--backend`, else `KEYCHAIN_BACKEND`, else the vault.
    func storeKind() throws(CommandFailure) -> StoreKind {
        if let name = arguments.value("backend") {
            guard let kind = StoreKind(rawValue: name) else {
                throw CommandFailure("--backend must be vault or secret-service", code: .usage)
            }
            return kind
        }
        do { return try StoreKind.fromEnvironment(environment) } catch { throw CommandFailure(error.description, code: .usage) }
    }

    /// The store item commands use (`--backend`): the vault, unlocked on demand for
    /// `accessibility`, or the Secret Service, with other programs' items when `--foreign` asks.
    func store(unlocking accessibility: KeychainCore.Accessibility?) throws(CommandFailure) -> any Store {
        let kind = try storeKind()
        let foreign = arguments.has("foreign")
        if kind == .vault, foreign {
            throw CommandFailure("--foreign applies to the Secret Service (--backend secret-service); a vault holds only its own items", code: .usage)
        }
        return try store(of: kind, unlocking: accessibility, foreignItems: foreign ? .readWrite : .hidden)
    }

    /// The store of `kind`: the vault unlocked on demand for `accessibility` (nil: as for a
    /// listing), or the Secret Service.
    func store(
        of kind: StoreKind, unlocking accessibility: KeychainCore.Accessibility? = nil,
        foreignItems: SecretServiceStore.ForeignItems = .hidden
    ) throws(CommandFailure) -> any Store {
        switch kind {
        case .vault:
            try ensureAvailable(accessibility)
            return try vault()
        case .secretService:
            do { return try kind.open(environment: environment, foreignItems: foreignItems) } catch { throw CommandFailure(error) }
        }
    }

    /// The vault, for the commands only a vault has (``VaultCommands``, backup and restore, serve).
    func vaultOnly(_ command: String, unlockingAgainOnNeed: Bool = true) throws(CommandFailure) -> Vault {
        guard try storeKind() == .vault else {
            throw CommandFailure("\(command) applies to the vault; the Secret Service's collection is locked and unlocked by your desktop", code: .usage)
        }
        return try vault(unlockingAgainOnNeed: unlockingAgainOnNeed)
    }

    /// The vault the command works on, opened once. `unlockingAgainOnNeed` false: a passphrase
    /// the environment offers is used only where the command asks (``ensureAvailable(_:)``),
    /// never again by itself (a daemon's Lock must hold).
    func vault(create: Bool = true, unlockingAgainOnNeed: Bool = true) throws(CommandFailure) -> Vault {
        if let openedVault { return openedVault }
        let location = try location
        do {
            // What any program of the user reads from the environment; then the command's own:
            // its --vault and --timeout, no idle timer (it exits), and no background sync. The
            // command unlocks first (``ensureAvailable(_:)``, which may prompt); a passphrase the
            // environment offers also unlocks again when another process's rekey retires the
            // keys between that unlock and the write, as in any program of the user.
            var configuration = try VaultConfiguration.fromEnvironment(environment)
            configuration.location = location
            if let timeout = arguments.value("timeout") { configuration.userUnlockTimeout = try VaultConfiguration.userUnlockTimeout(parsing: timeout) }
            configuration.idleTimeout = nil
            if !unlockingAgainOnNeed { configuration.passphraseEnvironment = nil }
            configuration.createIfMissing = create
            configuration.syncsInBackground = false
            let vault = try Vault(configuration)
            openedVault = vault
            return vault
        } catch {
            throw CommandFailure(error)
        }
    }

    /// Unlocks the vault when `accessibility` (or, if nil, any locked class) is not available
    /// without the passphrase, as every program does (``Unlocker``), with a prompt on the
    /// controlling terminal as the last resort.
    func ensureAvailable(_ accessibility: KeychainCore.Accessibility?) throws(CommandFailure) {
        let vault = try vault()
        let unlocker = Unlocker(environment: environment, terminalPrompt: "Vault passphrase: ")
        do {
            try unlocker.unlockIfNeeded(vault, for: accessibility)
        } catch .locked where !unlocker.offersPassphrase {
            throw CommandFailure("the vault is locked and no passphrase is available: set KEYCHAIN_PASSPHRASE_FILE or run from a terminal", code: .locked)
        } catch {
            guard case .invalidArgument = error else { throw CommandFailure(error) }
            // An unreadable passphrase file is the setup's failure; a line too long at the prompt, the person's slip.
            throw CommandFailure(error.description, code: PassphraseFile.isOffered(by: environment) ? .failure : .usage)
        }
    }

    /// Runs a store call, turning its error into the command's failure.
    @discardableResult
    func store<R>(_ body: () throws(StoreError) -> R) throws(CommandFailure) -> R {
        do { return try body() } catch { throw CommandFailure(error) }
    }
}
