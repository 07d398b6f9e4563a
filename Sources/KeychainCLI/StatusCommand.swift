import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

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
                    JSON.object(
                        [
                            "backend": .string(kind.rawValue), "vault": .string(status.location.path), "exists": .bool(false),
                            "secretService": .string(secretService),
                        ].merging(status.location.missingDirectory.map { ["problem": .string($0)] } ?? [:]) { $1 }
                    ).text + "\n")
            } else {
                try context.terminal.write(
                    """
                    backend:           vault
                    vault:             \(status.location.path) (\(status.location.missingDirectory.map { "no vault: " + $0 } ?? "no vault yet: the first write creates it"))
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
                "items": .number(ItemCount.of(vault, status) ?? status.itemCount), "rows": .number(status.itemCount), "secretService": .string(secretService),
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
                items:             \(ItemCount.text(vault, status))
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

    /// Who serves the Secret Service here, asked of the bus (``SecretServiceOwner``): a status
    /// call never starts a provider by D-Bus activation, so it never changes who serves the user.
    private static func secretServiceState(_ context: Context) -> String {
        if let none = noSessionBus(context.environment) { return none }
        let timeout = (try? SecretServiceStore.Configuration.timeout(in: context.environment)) ?? nil
        let owner: SecretServiceOwner?
        do {
            owner = try SecretServiceOwner.current(timeout: timeout ?? .seconds(2))
        } catch {
            return "not reachable: \(error.description)"
        }
        guard let owner else { return "no provider running (nothing owns org.freedesktop.secrets; a program's first call starts one where D-Bus activation is set up)" }
        let process = owner.processID.map { "process \($0)" } ?? owner.uniqueName
        let who = owner.servedVault.map { "keychain serve of \($0.path) (\(process))" } ?? "\(programName(owner.processID) ?? "a provider") (\(process))"
        guard let collection = owner.defaultCollection(timeout: timeout ?? .seconds(2)) else { return "\(who); no default collection" }
        return "\(who); default collection '\(collection.label)' is \(collection.locked ? "locked" : "unlocked")"
    }

    /// The program name of process `pid` (`/proc/PID/comm`), where it can be read.
    private static func programName(_ pid: Int32?) -> String? {
        guard let pid, let text = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return nil }
        let name = text.split(separator: "\n").first.map(String.init) ?? ""
        return name.isEmpty ? nil : name
    }

    /// What `status` says where no session bus can be had (a server, a container): the plain
    /// fact, and that the vault needs none; nil when an address is set or the user's bus socket
    /// is there.
    static func noSessionBus(_ environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return nil }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, SystemCall.accessible(runtime + "/bus", F_OK) { return nil }
        return "none here (no session bus: DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus); the vault needs none, keychain serve needs one"
    }
}
