import FoundationEssentials
internal import KeychainSystem

/// Which store to use: chosen explicitly, never guessed, and never switched silently.
package enum StoreKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The embedded encrypted vault (the default).
    case vault
    /// The desktop's Secret Service (GNOME Keyring, KWallet, KeePassXC).
    case secretService = "secret-service"

    package var description: String { rawValue }

    /// `KEYCHAIN_BACKEND` (`vault` or `secret-service`), or the vault when it is not set.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for any other value.
    package static func fromEnvironment(_ environment: [String: String] = ProcessEnvironment.current) throws(StoreError) -> StoreKind {
        guard let name = environment["KEYCHAIN_BACKEND"], !name.isEmpty else { return .vault }
        guard let kind = StoreKind(rawValue: name) else {
            throw .invalidArgument("KEYCHAIN_BACKEND must be vault or secret-service, not '\(name)'")
        }
        return kind
    }

    /// Opens the store: the vault as the environment describes it
    /// (``VaultConfiguration/fromEnvironment(_:)``: `KEYCHAIN_PATH`, `KEYCHAIN_KERNEL_KEYRING`,
    /// `KEYCHAIN_UNLOCK_TIMEOUT`, a passphrase file or credential), or the Secret Service with
    /// the timeout `KEYCHAIN_TIMEOUT` gives in seconds (default 5), the partition
    /// `KEYCHAIN_PARTITION` names (none by default), and `foreignItems` (other programs' items
    /// hidden by default).
    /// - Throws: ``StoreError/invalidArgument(_:)`` for a `KEYCHAIN_TIMEOUT` that is not a
    ///   number of seconds in ``SecretServiceStore/Configuration/timeoutRange``, and for the
    ///   vault's variables as ``VaultConfiguration/fromEnvironment(_:)`` says.
    package func open(
        environment: [String: String] = ProcessEnvironment.current,
        foreignItems: SecretServiceStore.ForeignItems = .hidden
    ) throws(StoreError) -> any Store {
        switch self {
        case .vault:
            // A service started with a passphrase (systemd's LoadCredential=, or a file) unlocks on first need.
            return try Vault(try VaultConfiguration.fromEnvironment(environment))
        case .secretService:
            var configuration = SecretServiceStore.Configuration(foreignItems: foreignItems)
            if let timeout = try SecretServiceStore.Configuration.timeout(in: environment) { configuration.timeout = timeout }
            if let partition = environment["KEYCHAIN_PARTITION"], !partition.isEmpty {
                configuration.partition = partition
            }
            return try SecretServiceStore(configuration)
        }
    }
}
