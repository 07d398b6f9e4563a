/// How a Secure Enclave Valet's data is protected. Declared for source compatibility; the
/// Secure Enclave Valets that use it come with user-presence support.
public enum SecureEnclaveAccessControl: Int, CustomStringConvertible, Equatable, Sendable {
    /// Proof of presence each read (on Linux: the vault passphrase, or an application's authenticator).
    case userPresence = 1
    /// Any enrolled biometric; needs a biometric authenticator.
    case biometricAny
    /// The currently enrolled biometrics; needs a biometric authenticator.
    case biometricCurrentSet
    /// The device passcode (on Linux: the vault passphrase).
    case devicePasscode

    /// The suffix Valet appends to the service string (empty for userPresence, as Valet 1-2 stored it).
    public var description: String {
        switch self {
        case .userPresence: ""
        case .biometricAny: "_AccessControlTouchIDAnyFingerprint"
        case .biometricCurrentSet: "_AccessControlTouchIDCurrentFingerprintSet"
        case .devicePasscode: "_AccessControlDevicePasscode"
        }
    }
}
