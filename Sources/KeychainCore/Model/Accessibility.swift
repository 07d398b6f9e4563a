/// When an item can be read, as the Apple Keychain's `kSecAttrAccessible` classes, given a
/// meaning on Linux by the vault's lock state (see the README's accessibility table).
///
/// Raw values are Apple's attribute values, so queries written for Apple carry over.
public enum Accessibility: String, Sendable, Hashable, CaseIterable, Codable {
    /// Readable only while the vault is unlocked in this process; dropped by `lock()` and idle timeout.
    case whenUnlocked = "ak"
    /// Readable by any process of the user from the first unlock until reboot (kernel keyring cache).
    case afterFirstUnlock = "ck"
    /// Like `whenUnlockedThisDeviceOnly`, and only in a vault protected by a passphrase;
    /// removing the passphrase destroys these items.
    case whenPasscodeSetThisDeviceOnly = "akpu"
    /// `whenUnlocked`, and bound to this machine: a copied vault does not open it elsewhere.
    case whenUnlockedThisDeviceOnly = "aku"
    /// `afterFirstUnlock`, and bound to this machine.
    case afterFirstUnlockThisDeviceOnly = "cku"
    /// Legacy (deprecated by Apple); kept so that old items can be migrated. Treated as `afterFirstUnlock`.
    case always = "dk"
    /// Legacy; kept so that old items can be migrated. Treated as `afterFirstUnlockThisDeviceOnly`.
    case alwaysThisDeviceOnly = "dku"

    /// Whether the class is bound to this machine.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenPasscodeSetThisDeviceOnly, .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly: true
        default: false
        }
    }

    /// Whether the class key stays available after `lock()` until reboot (cached in the kernel keyring).
    public var survivesLock: Bool {
        switch self {
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly, .always, .alwaysThisDeviceOnly: true
        default: false
        }
    }

    /// The stable code stored in the vault.
    var code: UInt8 {
        switch self {
        case .whenUnlocked: 1
        case .afterFirstUnlock: 2
        case .always: 3
        case .whenPasscodeSetThisDeviceOnly: 4
        case .whenUnlockedThisDeviceOnly: 5
        case .afterFirstUnlockThisDeviceOnly: 6
        case .alwaysThisDeviceOnly: 7
        }
    }

    /// Hashes the one-byte code, not the raw string a raw-valued enum would hash: class keys
    /// are found by accessibility for every row a read opens (a listing hashed 100,000 strings).
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    init?(code: UInt8) {
        guard let match = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = match
    }
}
