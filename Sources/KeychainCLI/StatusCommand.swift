import FoundationEssentials
import KeychainCore

/// `keychain status`: where the vault is, its lock state and what is available, as text or JSON.
enum StatusCommand {
    static let command = Command(
        name: "status", summary: "where the vault is, whether it is locked, what is available",
        options: [CommandTable.json],
        examples: ["keychain status", "keychain status --json"], run: status)

    private static func status(_ context: Context) throws(CommandFailure) -> ExitCode {
        let kind = try context.storeKind()
        let secretService = secretServiceState(context)
        let json = context.arguments.has("json")
        guard kind == .vault else {
            if json {
                try context.terminal.write(JSON.object(["backend": .string(kind.rawValue), "secretService": .string(secretService)]).text + "\n")
            } else {
                try context.terminal.write("backend:           secret-service\nsecret service:    \(secretService)\n")
            }
            return .success
        }
        let vault = try context.vault()
        let status = vault.status()
        guard status.exists else {
            if json {
                try context.terminal.write(
                    JSON.object([
                        "backend": .string(kind.rawValue), "vault": .string(status.location.path), "exists": .bool(false),
                        "secretService": .string(secretService),
                    ]).text + "\n")
            } else {
                try context.terminal.write(
                    """
                    backend:           vault
                    vault:             \(status.location.path) (no vault yet: the first write creates it)
                    secret service:    \(secretService)\n
                    """)
            }
            return .success
        }
        let kernel: String
        switch status.kernelKeyring {
        case .available: kernel = "available"
        case .disabled: kernel = "disabled"
        case .unavailable(let reason): kernel = "unavailable (\(reason))"
        }
        let classes = status.availableClasses.map { "\($0)" }
        let idleSeconds = idleLockSeconds(context)
        let idleLock =
            idleSeconds == 0
            ? "none: keychain unlock opens whenUnlocked items to that command only (KEYCHAIN_UNLOCK_TIMEOUT=0)"
            : "after \(idleSeconds) s without use (KEYCHAIN_UNLOCK_TIMEOUT, keychain unlock --timeout; default \(defaultIdleLockSeconds))"
        if json {
            let object: [String: JSON] = [
                "backend": .string(kind.rawValue), "exists": .bool(true),
                "vault": .string(status.location.path), "formatVersion": .number(status.formatVersion),
                "passphrase": .bool(status.hasPassphrase), "unlocked": .bool(status.isUnlocked),
                "userUnlockRemaining": .string(status.userUnlockRemaining ?? ""), "idleLockSeconds": .number(idleSeconds),
                "availableClasses": .array(classes.map { .string($0) }), "kernelKeyring": .string(kernel),
                "items": .number(status.itemCount), "secretService": .string(secretService),
                "rollback": .string(status.rollbackCheck.description),
            ]
            try context.terminal.write(JSON.object(object).text + "\n")
        } else {
            try context.terminal.write(
                """
                backend:           vault
                vault:             \(status.location.path)
                format version:    \(status.formatVersion)
                passphrase:        \(status.hasPassphrase ? "set" : "none (key file \(status.location.keyFilePath))")
                locked:            \(status.hasPassphrase ? (status.isUnlocked ? "no" + (status.userUnlockRemaining.map { " (unlocked for your processes, \($0) left without use)" } ?? "") : "yes") : "no (no passphrase)")
                idle lock:         \(status.hasPassphrase ? idleLock : "none (no passphrase)")
                available classes: \(classes.isEmpty ? "none" : classes.joined(separator: ", "))
                kernel keyring:    \(kernel)
                items:             \(status.itemCount)
                rollback check:    \(status.rollbackCheck)
                secret service:    \(secretService)\n
                """ + (status.machineBinding.map { "note:              \($0)\n" } ?? ""))
        }
        return .success
    }

    /// The idle lock's default, in seconds (``VaultConfiguration/userUnlockTimeout(parsing:)``).
    static let defaultIdleLockSeconds = 300

    /// How long the user's unlocked state lasts without use, in seconds; 0 when it is off.
    private static func idleLockSeconds(_ context: Context) -> Int {
        let configured: Duration?
        do {
            configured = try VaultConfiguration.userUnlockTimeout(parsing: context.environment["KEYCHAIN_UNLOCK_TIMEOUT"] ?? "")
        } catch {
            configured = .seconds(defaultIdleLockSeconds)
        }
        guard let timeout = configured else { return 0 }
        return Int(timeout.components.seconds)
    }

    /// Whether a Secret Service answers here, and its default collection; bounded in time.
    private static func secretServiceState(_ context: Context) -> String {
        var environment = context.environment
        if environment["KEYCHAIN_TIMEOUT"] == nil { environment["KEYCHAIN_TIMEOUT"] = "2" }
        do {
            guard let store = try StoreKind.secretService.open(environment: environment) as? SecretServiceStore else { return "unknown" }
            let probe = try store.probe()
            return "reachable; default collection '\(probe.label)' is \(probe.locked ? "locked" : "unlocked")"
        } catch {
            return "not reachable: \(error.description)"
        }
    }
}
