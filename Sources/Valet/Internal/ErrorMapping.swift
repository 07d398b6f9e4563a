import KeychainCore
import ValetNaming

extension KeychainError {
    /// The one place the store's errors become Valet's: a missing item is `itemNotFound`; a
    /// cancelled or refused proof of presence is `userCancelled` (as Valet maps
    /// errSecUserCanceled and errSecAuthFailed); every other failure (locked, damaged,
    /// unavailable, too large...) is `couldNotAccessKeychain`, as Apple's statuses fold into it.
    /// The reason itself is kept in `FailureLog.last` (and logged with `KEYCHAIN_LOG=1`).
    init(_ error: StoreError) {
        FailureLog.record(error)
        switch error {
        case .itemNotFound: self = .itemNotFound
        case .userCancelled, .authenticationFailed: self = .userCancelled
        default: self = .couldNotAccessKeychain
        }
    }
}
