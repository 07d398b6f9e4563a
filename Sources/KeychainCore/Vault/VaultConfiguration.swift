internal import KeychainSystem

/// How to open a vault.
public struct VaultConfiguration: Sendable {
    /// Where the vault lives. Default: `KEYCHAIN_PATH`, else under `$XDG_DATA_HOME/keychain/`.
    public var location: VaultLocation
    /// After this long without use, an unlocked vault locks itself (whenUnlocked keys are
    /// wiped from memory). Nil never locks by time. Default 5 minutes.
    public var idleTimeout: Duration?
    /// The scrypt cost for a new or changed passphrase. Default N=2^17, r=8, p=1.
    public var scryptParameters: ScryptParameters
    /// Whether afterFirstUnlock keys are cached in the user's kernel keyring until reboot (and
    /// whenUnlocked keys for ``userUnlockTimeout``). When false (or when the kernel refuses),
    /// they are kept in this process only.
    public var usesKernelKeyring: Bool
    /// How long an unlock opens whenUnlocked items to every process of the user without use:
    /// the user's unlocked state, an idle timeout each use pushes back, ended early by
    /// ``Vault/lock()`` or a reboot. Nil keeps whenUnlocked keys in the unlocking process
    /// only. Default 5 minutes.
    public var userUnlockTimeout: Duration?
    /// What binds ThisDeviceOnly classes to this machine.
    public var machineIdentity: MachineIdentity
    /// The largest value accepted. Default 1 MiB.
    public var maximumValueSize: Int
    /// Where a locked vault finds its passphrase on first need, without the program asking:
    /// the environment the command reads a passphrase from (`KEYCHAIN_PASSPHRASE_FILE`, or a systemd
    /// credential). Set for the default store the faces use; nil (never unlock by itself) otherwise.
    public var passphraseEnvironment: [String: String]?
    /// Whether the first write to a missing vault creates it (with a key file, no passphrase).
    /// Reads never create a vault: a missing one holds no items.
    public var createIfMissing: Bool
    /// Whether a vault enrolled in sync (`keychain sync init` or `join`) syncs in the
    /// background while this process uses its synchronizable items: the outbox is sent at
    /// each such write and other devices' changes arrive by watch. Default true; a
    /// short-lived program (the `keychain` command) leaves that to `keychain sync run`.
    public var syncsInBackground: Bool
    /// Which boot this is (tests play another boot with another file).
    var bootIdentity = BootIdentity()

    /// A configuration; each parameter defaults as its property says.
    public init(
        location: VaultLocation = .default(),
        idleTimeout: Duration? = .seconds(300),
        scryptParameters: ScryptParameters = .default,
        usesKernelKeyring: Bool = true,
        userUnlockTimeout: Duration? = .seconds(300),
        machineIdentity: MachineIdentity = MachineIdentity(),
        maximumValueSize: Int = 1 << 20,
        createIfMissing: Bool = true,
        passphraseEnvironment: [String: String]? = nil,
        syncsInBackground: Bool = true
    ) {
        self.location = location
        self.idleTimeout = idleTimeout
        self.scryptParameters = scryptParameters
        self.usesKernelKeyring = usesKernelKeyring
        self.userUnlockTimeout = userUnlockTimeout
        self.machineIdentity = machineIdentity
        self.maximumValueSize = maximumValueSize
        self.createIfMissing = createIfMissing
        self.passphraseEnvironment = passphraseEnvironment
        self.syncsInBackground = syncsInBackground
    }
}

/// What ``Vault/status()`` reports.
public struct VaultStatus: Sendable {
    /// Whether keys can be shared through the user's kernel keyring.
    public enum KernelKeyringState: Sendable, Equatable {
        /// The kernel keyring takes and gives keys.
        case available
        /// Turned off (`usesKernelKeyring` false, `KEYCHAIN_KERNEL_KEYRING=off`).
        case disabled
        /// The kernel refuses keyctl here (some container profiles), with its reason: unlocking stays per process.
        case unavailable(reason: String)
    }
    /// Where the vault is (or would be).
    public var location: VaultLocation
    /// False when there is no vault file yet (nothing was created to answer); the other fields
    /// then describe the vault a first write would create.
    public var exists: Bool
    /// The vault's format (2 for this release; 1 until a vault of 0.1.x is upgraded).
    public var formatVersion: Int
    /// Whether a passphrase protects the vault (else a key file beside it).
    public var hasPassphrase: Bool
    /// Whether whenUnlocked items are readable now in this process (by its own unlock, or the user's).
    public var isUnlocked: Bool
    /// What is left of the user's unlocked state, as the kernel reports it (`4m`, `59s`); nil
    /// when there is none (locked, or not shared with the user's other processes).
    public var userUnlockRemaining: String?
    /// The accessibility classes whose items can be read and written now.
    public var availableClasses: [Accessibility]
    /// Whether the kernel keyring serves this vault.
    public var kernelKeyring: KernelKeyringState
    /// Why ThisDeviceOnly classes are unavailable, if they are.
    public var machineBinding: String?
    /// How many items the vault holds.
    public var itemCount: Int
    /// Whether this boot's record vouches that the file is the vault's newest copy.
    public var rollbackCheck: RollbackCheck
}

/// What this boot's record of a vault's newest generation (in the user's kernel keyring) says
/// about the copy at hand. The record refuses an older copy of the file; it lives until reboot,
/// and any process of the user can delete it.
public enum RollbackCheck: Sendable, Equatable, CustomStringConvertible {
    /// The file is at the newest generation this boot recorded for it.
    case current
    /// No record, and the file was not last written in this boot by a process that keeps one:
    /// first use since a reboot (or the vault was written with the kernel keyring off).
    case noRecordThisBoot
    /// The file was last written in this boot, yet the record is gone (deleted, or pushed out
    /// by many other vaults): an older copy could not be told from the current one. Reads go
    /// on; writes wait until the owner confirms this copy (``Vault/acceptCurrentGeneration()``,
    /// `keychain verify --accept`).
    case unknown
    /// Not checked, and why (the kernel keyring off or refused, the vault locked, an older format).
    case notChecked(String)

    public var description: String {
        switch self {
        case .current: "current (this boot's record vouches for this copy)"
        case .noRecordThisBoot: "no record this boot (first use since a reboot)"
        case .unknown: "unknown: written in this boot, but this boot's record is gone; writes wait for keychain verify --accept"
        case .notChecked(let why): "not checked (\(why))"
        }
    }
}

extension VaultConfiguration {
    /// The configuration the environment describes, as every program of the user reads it
    /// (the `keychain` command and a Valet program alike): the vault at `KEYCHAIN_PATH` (else
    /// the default location), the kernel keyring unless `KEYCHAIN_KERNEL_KEYRING=off`, the
    /// user's unlocked state for `KEYCHAIN_UNLOCK_TIMEOUT` seconds (`0`: this process only;
    /// default 300), and a passphrase from `KEYCHAIN_PASSPHRASE_FILE` or a systemd credential
    /// on first need, when one is offered.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for a `KEYCHAIN_KERNEL_KEYRING` other than
    ///   `on` or `off`, or a `KEYCHAIN_UNLOCK_TIMEOUT` that is not 0 to 604800 seconds.
    package static func fromEnvironment(_ environment: [String: String] = ProcessEnvironment.current) throws(StoreError) -> VaultConfiguration {
        let kernelKeyring: Bool
        switch environment["KEYCHAIN_KERNEL_KEYRING"] ?? "" {
        case "", "on": kernelKeyring = true
        case "off": kernelKeyring = false
        case let other: throw .invalidArgument("KEYCHAIN_KERNEL_KEYRING must be on or off, not '\(other)'")
        }
        return VaultConfiguration(
            location: .default(environment: environment), usesKernelKeyring: kernelKeyring,
            userUnlockTimeout: try userUnlockTimeout(parsing: environment["KEYCHAIN_UNLOCK_TIMEOUT"] ?? ""),
            passphraseEnvironment: PassphraseFile.isOffered(by: environment) ? environment : nil)
    }

    /// The longest user unlock a timeout may ask for: a week.
    package static let longestUserUnlock = 604_800

    /// A user-unlock timeout as written in `KEYCHAIN_UNLOCK_TIMEOUT` or `keychain unlock
    /// --timeout`: whole seconds, `0` for this process only (nil), empty for the default 300.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for anything else.
    package static func userUnlockTimeout(parsing text: String) throws(StoreError) -> Duration? {
        guard !text.isEmpty else { return .seconds(300) }
        guard let seconds = Int(text), (0...longestUserUnlock).contains(seconds) else {
            throw .invalidArgument("the unlock timeout must be a whole number of seconds from 0 to \(longestUserUnlock), not '\(text)'")
        }
        return seconds == 0 ? nil : .seconds(seconds)
    }
}
