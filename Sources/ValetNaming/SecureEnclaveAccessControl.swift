import KeychainCore

/// How a Secure Enclave Valet's data is protected: what a read must prove. On Linux the proof
/// is the vault passphrase, given to a presence authenticator (the terminal by default); the
/// item's value cannot be decrypted without it (see the README's "User presence").
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

extension SecureEnclaveAccessControl {
    /// The core's access control.
    package var coreValue: AccessControl {
        switch self {
        case .userPresence: .userPresence
        case .biometricAny: .biometryAny
        case .biometricCurrentSet: .biometryCurrentSet
        case .devicePasscode: .devicePasscode
        }
    }
}

extension DefaultStringInterpolation {
    /// A readable name for descriptions (the type's own description is the service suffix).
    package mutating func appendInterpolation(configuration control: SecureEnclaveAccessControl) {
        switch control {
        case .userPresence: appendLiteral("userPresence")
        case .biometricAny: appendLiteral("biometricAny")
        case .biometricCurrentSet: appendLiteral("biometricCurrentSet")
        case .devicePasscode: appendLiteral("devicePasscode")
        }
    }
}
