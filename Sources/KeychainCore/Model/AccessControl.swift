/// What a read must prove before an item's value can be decrypted, as the Keychain's
/// `SecAccessControl` flags.
///
/// Linux has no Secure Enclave. In the vault, such an item's value is sealed to a key pair
/// whose private key is wrapped by the vault passphrase: it cannot be decrypted until a
/// ``PresenceAuthenticator`` supplies that passphrase (the proof), even by a process that has
/// the vault unlocked. Items can be written without the proof. Only the vault honours access
/// control; the Secret Service store refuses such items.
public enum AccessControl: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Any proof the authenticator accepts (by default, the vault passphrase on the terminal).
    case userPresence = 1
    /// A biometric proof; needs an authenticator that offers biometry.
    case biometryAny = 2
    /// A biometric proof with the currently enrolled set; needs an authenticator that offers biometry.
    case biometryCurrentSet = 3
    /// The passphrase itself.
    case devicePasscode = 4

    /// Whether only a biometric authenticator can give the proof.
    public var needsBiometry: Bool { self == .biometryAny || self == .biometryCurrentSet }

    public var description: String {
        switch self {
        case .userPresence: "userPresence"
        case .biometryAny: "biometryAny"
        case .biometryCurrentSet: "biometryCurrentSet"
        case .devicePasscode: "devicePasscode"
        }
    }
}
