import KeychainCore

/// A keychain status code, as Apple's `OSStatus`: 0 for success, negative for failures.
public typealias OSStatus = Int32

/// The status Apple's keychain returns for success.
public let errSecSuccess: OSStatus = 0

extension StoreError {
    /// The `OSStatus` Apple's keychain reports in the same situation.
    var status: OSStatus {
        switch self {
        case .itemNotFound: -25300
        case .duplicateItem: -25299
        case .locked, .passphraseRequired, .interactionNotAllowed, .boundToAnotherMachine: -25308
        case .userCancelled: -128
        case .authenticationFailed, .wrongPassphrase: -25293
        case .valueTooLarge, .invalidArgument: -50
        case .unavailable: -25291
        case .corrupted, .tampered, .unsupportedFormatVersion: -26275
        case .insecurePermissions: -61
        case .io: -36
        }
    }
}

extension LocksmithError {
    /// The error for a failed status: its own case where Locksmith has one, otherwise
    /// `.undefined` (Locksmith returned silently there, losing data: its issue #159).
    static func failure(_ status: OSStatus) -> LocksmithError {
        LocksmithError(fromStatusCode: Int(status)) ?? .undefined
    }
}
