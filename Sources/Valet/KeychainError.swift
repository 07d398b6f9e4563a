/// Why a Valet operation failed.
public enum KeychainError: Int, CaseIterable, CustomStringConvertible, Error, Equatable, Sendable {
    /// The store cannot be used right now: the vault is locked, damaged, or unreachable, or the
    /// data is in a class that needs a passphrase.
    case couldNotAccessKeychain
    /// The user refused or cancelled the proof of presence.
    case userCancelled
    /// No value is stored for the key.
    case itemNotFound
    /// Kept for source compatibility; Linux has no entitlements.
    case missingEntitlement
    /// The key is empty.
    case emptyKey
    /// The value is empty.
    case emptyValue

    /// `"KeychainError.<case>"`.
    public var description: String {
        switch self {
        case .couldNotAccessKeychain: "KeychainError.couldNotAccessKeychain"
        case .userCancelled: "KeychainError.userCancelled"
        case .itemNotFound: "KeychainError.itemNotFound"
        case .missingEntitlement: "KeychainError.missingEntitlement"
        case .emptyKey: "KeychainError.emptyKey"
        case .emptyValue: "KeychainError.emptyValue"
        }
    }
}
