/// How to open a vault.
public struct VaultConfiguration: Sendable {
    /// Where the vault lives. Default: `KEYCHAIN_PATH`, else under `$XDG_DATA_HOME/keychain/`.
    public var location: VaultLocation
    /// After this long without use, an unlocked vault locks itself (whenUnlocked keys are
    /// wiped from memory). Nil never locks by time. Default 5 minutes.
    public var idleTimeout: Duration?
    /// The scrypt cost for a new or changed passphrase. Default N=2^17, r=8, p=1.
    public var scryptParameters: ScryptParameters
    /// Whether afterFirstUnlock keys are cached in the user's kernel keyring until reboot.
    /// When false (or when the kernel refuses), they are kept in this process only.
    public var usesKernelKeyring: Bool
    /// What binds ThisDeviceOnly classes to this machine.
    public var machineIdentity: MachineIdentity
    /// The largest value accepted. Default 1 MiB.
    public var maximumValueSize: Int
    /// Whether the first write to a missing vault creates it (with a key file, no passphrase).
    /// Reads never create a vault: a missing one holds no items.
    public var createIfMissing: Bool

    public init(
        location: VaultLocation = .default(),
        idleTimeout: Duration? = .seconds(300),
        scryptParameters: ScryptParameters = .default,
        usesKernelKeyring: Bool = true,
        machineIdentity: MachineIdentity = MachineIdentity(),
        maximumValueSize: Int = 1 << 20,
        createIfMissing: Bool = true
    ) {
        self.location = location
        self.idleTimeout = idleTimeout
        self.scryptParameters = scryptParameters
        self.usesKernelKeyring = usesKernelKeyring
        self.machineIdentity = machineIdentity
        self.maximumValueSize = maximumValueSize
        self.createIfMissing = createIfMissing
    }
}

/// What ``Vault/status()`` reports.
public struct VaultStatus: Sendable {
    public enum KernelKeyringState: Sendable, Equatable {
        case available
        case disabled
        case unavailable(reason: String)
    }
    public var location: VaultLocation
    /// False when there is no vault file yet (nothing was created to answer); the other fields
    /// then describe the vault a first write would create.
    public var exists: Bool
    public var formatVersion: Int
    public var hasPassphrase: Bool
    /// Whether whenUnlocked items are readable now in this process.
    public var isUnlocked: Bool
    /// The accessibility classes whose items can be read and written now.
    public var availableClasses: [Accessibility]
    public var kernelKeyring: KernelKeyringState
    /// Why ThisDeviceOnly classes are unavailable, if they are.
    public var machineBinding: String?
    public var itemCount: Int
}
