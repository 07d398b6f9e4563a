import ValetNaming

/// Valet 2's accessibility (`VALAccessibility`, an `NS_ENUM` of `NSUInteger`), as Swift imports it.
public enum VALAccessibility: UInt, Sendable {
    /// Readable while the vault is unlocked (`kSecAttrAccessibleWhenUnlocked`).
    case whenUnlocked = 1
    /// Readable after the first unlock since boot (`kSecAttrAccessibleAfterFirstUnlock`).
    case afterFirstUnlock
    /// Retired by Apple (iOS 12) and by Valet 5; a `VALValet` with it cannot be made here.
    case always
    /// Readable with the passphrase, on this machine only (`kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`).
    case whenPasscodeSetThisDeviceOnly
    /// As `whenUnlocked`, on this machine only.
    case whenUnlockedThisDeviceOnly
    /// As `afterFirstUnlock`, on this machine only.
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
    /// Any proof of presence: here, the vault passphrase.
    case userPresence = 1
    /// Any enrolled fingerprint: needs a biometric authenticator.
    case touchIDAnyFingerprint = 2
    /// The fingerprints enrolled now: needs a biometric authenticator.
    case touchIDCurrentFingerprintSet = 3
    /// The device passcode: here, the vault passphrase.
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
    /// The migration query is malformed.
    case invalidQuery = 1
    /// The query found nothing to migrate.
    case noItemsToMigrateFound
    /// The items could not be read.
    case couldNotReadKeychain
    /// An item has no usable key (account).
    case keyInQueryResultInvalid
    /// An item has no usable value.
    case dataInQueryResultInvalid
    /// Two items have the same key.
    case duplicateKeyInQueryResult
    /// A key is already in the destination valet.
    case keyInQueryResultAlreadyExistsInValet
    /// The destination could not be written.
    case couldNotWriteToKeychain
    /// The originals could not be removed.
    case removalFailed
}
