import ValetNaming

/// Valet 2's accessibility (`VALAccessibility`, an `NS_ENUM` of `NSUInteger`), as Swift imports it.
public enum VALAccessibility: UInt, Sendable {
    case whenUnlocked = 1
    case afterFirstUnlock
    /// Retired by Apple (iOS 12) and by Valet 5; a `VALValet` with it cannot be made here.
    case always
    case whenPasscodeSetThisDeviceOnly
    case whenUnlockedThisDeviceOnly
    case afterFirstUnlockThisDeviceOnly
    /// Retired by Apple (iOS 12) and by Valet 5; a `VALValet` with it cannot be made here.
    case alwaysThisDeviceOnly

    /// The Valet 5 accessibility with the same service string, nil for the retired ones.
    var modern: Accessibility? {
        switch self {
        case .whenUnlocked: .whenUnlocked
        case .afterFirstUnlock: .afterFirstUnlock
        case .whenPasscodeSetThisDeviceOnly: .whenPasscodeSetThisDeviceOnly
        case .whenUnlockedThisDeviceOnly: .whenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: .afterFirstUnlockThisDeviceOnly
        case .always, .alwaysThisDeviceOnly: nil
        }
    }

    init(_ accessibility: Accessibility) {
        switch accessibility {
        case .whenUnlocked: self = .whenUnlocked
        case .afterFirstUnlock: self = .afterFirstUnlock
        case .whenPasscodeSetThisDeviceOnly: self = .whenPasscodeSetThisDeviceOnly
        case .whenUnlockedThisDeviceOnly: self = .whenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: self = .afterFirstUnlockThisDeviceOnly
        }
    }
}

/// Valet 2's Secure Enclave access control (`VALAccessControl`), as Swift imports it.
public enum VALAccessControl: UInt, Sendable {
    case userPresence = 1
    case touchIDAnyFingerprint = 2
    case touchIDCurrentFingerprintSet = 3
    case devicePasscode = 4

    var modern: SecureEnclaveAccessControl {
        switch self {
        case .userPresence: .userPresence
        case .touchIDAnyFingerprint: .biometricAny
        case .touchIDCurrentFingerprintSet: .biometricCurrentSet
        case .devicePasscode: .devicePasscode
        }
    }
}

/// The domain of the errors Valet 2's migrations return.
public let VALMigrationErrorDomain: String = "VALMigrationErrorDomain"

/// The codes of Valet 2's migration errors (`VALMigrationError`), as Swift imports them.
public enum VALMigrationError: UInt, Sendable {
    case invalidQuery = 1
    case noItemsToMigrateFound
    case couldNotReadKeychain
    case keyInQueryResultInvalid
    case dataInQueryResultInvalid
    case duplicateKeyInQueryResult
    case keyInQueryResultAlreadyExistsInValet
    case couldNotWriteToKeychain
    case removalFailed
}
