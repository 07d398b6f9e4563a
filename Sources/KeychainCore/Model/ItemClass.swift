/// The kind of a keychain item, as the Apple Keychain's `kSecClass`.
public enum ItemClass: String, Sendable, Hashable, CaseIterable, Codable {
    /// `kSecClassGenericPassword` ("genp"): identified by service and account.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword` ("inet"): identified by server, account, protocol, port, path...
    case internetPassword = "inet"
    // Certificates and keys would be stored blobs with their own identity attributes;
    // the vault format reserves codes for them (see `VaultFormat.itemClassCode`).

    var code: UInt8 {
        switch self {
        case .genericPassword: 1
        case .internetPassword: 2
        }
    }

    init?(code: UInt8) {
        switch code {
        case 1: self = .genericPassword
        case 2: self = .internetPassword
        default: return nil
        }
    }
}
