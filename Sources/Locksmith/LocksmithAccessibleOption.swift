/// When an item can be read (`kSecAttrAccessible`); see the README's accessibility table for
/// the meaning each has in the vault. `rawValue` is Apple's constant; an unknown one reads as
/// `.whenUnlocked`.
public enum LocksmithAccessibleOption: RawRepresentable, Sendable, CaseIterable {
    /// Apple's accessibility classes (`kSecAttrAccessible...`); see the README for their meaning in the vault.
    case whenUnlocked, afterFirstUnlock, always, whenUnlockedThisDeviceOnly, afterFirstUnlockThisDeviceOnly
    /// Apple's accessibility classes (`kSecAttrAccessible...`).
    case alwaysThisDeviceOnly, whenPasscodeSetThisDeviceOnly

    public init?(rawValue: String) {
        self = Self.allCases.first { $0.rawValue == rawValue } ?? .whenUnlocked
    }

    public var rawValue: String {
        switch self {
        case .whenUnlocked: "ak"
        case .afterFirstUnlock: "ck"
        case .always: "dk"
        case .whenUnlockedThisDeviceOnly: "aku"
        case .afterFirstUnlockThisDeviceOnly: "cku"
        case .alwaysThisDeviceOnly: "dku"
        case .whenPasscodeSetThisDeviceOnly: "akpu"
        }
    }
}
