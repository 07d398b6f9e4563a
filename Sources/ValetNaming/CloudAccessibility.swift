/// The accessibility values an iCloud (synchronizable) Valet may use: no ThisDeviceOnly class.
public enum CloudAccessibility: Int, CaseIterable, CustomStringConvertible, Equatable, Sendable {
    case whenUnlocked = 1
    case afterFirstUnlock = 2

    /// The matching ``Accessibility``.
    public var accessibility: Accessibility {
        switch self {
        case .whenUnlocked: .whenUnlocked
        case .afterFirstUnlock: .afterFirstUnlock
        }
    }

    public var description: String { accessibility.description }
    public var secAccessibilityAttribute: String { accessibility.secAccessibilityAttribute }
}
