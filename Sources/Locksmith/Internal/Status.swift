import KeychainCore

/// A keychain status code, as Apple's `OSStatus`: 0 for success, negative for failures.
public typealias OSStatus = Int32

/// The status Apple's keychain returns for success.
public let errSecSuccess: OSStatus = 0

extension LocksmithError {
    /// The error for a failed status: its own case where Locksmith has one, otherwise
    /// `.undefined` (Locksmith returned silently there, losing data: its issue #159).
    static func failure(_ status: OSStatus) -> LocksmithError {
        LocksmithError(fromStatusCode: Int(status)) ?? .undefined
    }
}
