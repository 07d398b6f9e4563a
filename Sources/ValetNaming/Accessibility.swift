import KeychainCore

/// When a Valet's data can be read. On Linux the vault gives each value a real meaning
/// (see the README's table): "unlocked" is the vault's own lock state.
public enum Accessibility: Int, CaseIterable, CustomStringConvertible, Equatable, Sendable {
    /// Readable while the vault is unlocked in this process (always, for a vault without a passphrase).
    case whenUnlocked = 1
    /// Readable by every process of the user from the first unlock until reboot.
    case afterFirstUnlock = 2
    /// Only in a vault with a passphrase, readable while unlocked; removing the passphrase
    /// destroys the data; bound to this machine.
    case whenPasscodeSetThisDeviceOnly = 4
    /// `whenUnlocked`, bound to this machine: a copied vault file does not open it elsewhere.
    case whenUnlockedThisDeviceOnly = 5
    /// `afterFirstUnlock`, bound to this machine.
    case afterFirstUnlockThisDeviceOnly = 6

    /// `"Accessible"` and the case name, as stored in Valet's service strings.
    public var description: String {
        switch self {
        case .whenUnlocked: "AccessibleWhenUnlocked"
        case .afterFirstUnlock: "AccessibleAfterFirstUnlock"
        case .whenPasscodeSetThisDeviceOnly: "AccessibleWhenPasscodeSetThisDeviceOnly"
        case .whenUnlockedThisDeviceOnly: "AccessibleWhenUnlockedThisDeviceOnly"
        case .afterFirstUnlockThisDeviceOnly: "AccessibleAfterFirstUnlockThisDeviceOnly"
        }
    }

    /// The `kSecAttrAccessible` value: "ak", "ck", "akpu", "aku", "cku".
    public var secAccessibilityAttribute: String { coreValue.rawValue }

    package var coreValue: KeychainCore.Accessibility {
        switch self {
        case .whenUnlocked: .whenUnlocked
        case .afterFirstUnlock: .afterFirstUnlock
        case .whenPasscodeSetThisDeviceOnly: .whenPasscodeSetThisDeviceOnly
        case .whenUnlockedThisDeviceOnly: .whenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: .afterFirstUnlockThisDeviceOnly
        }
    }
}
