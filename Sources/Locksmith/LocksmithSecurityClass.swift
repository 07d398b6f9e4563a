/// The keychain item classes (`kSecClass`). Only generic and internet passwords can be stored;
/// an unknown raw value reads as `.genericPassword`.
public enum LocksmithSecurityClass: RawRepresentable, Sendable, CaseIterable {
    /// Apple's item classes (`kSecClass...`); only passwords can be stored.
    case genericPassword, internetPassword, certificate, key, identity

    public init?(rawValue: String) {
        self = Self.allCases.first { $0.rawValue == rawValue } ?? .genericPassword
    }

    public var rawValue: String {
        switch self {
        case .genericPassword: "genp"
        case .internetPassword: "inet"
        case .certificate: "cert"
        case .key: "keys"
        case .identity: "idnt"
        }
    }
}
