import KeychainCore
import Security
import Testing

/// One table from a store's failure to Apple's OSStatus, for every face: SecItem, Locksmith
/// and UICKeyChainStore report the same code for the same failure.
@Suite("One status table for every failure")
struct StatusTableTests {
    /// Every failure, with the code Apple's keychain gives in that situation. The switch has no
    /// default: a new failure does not compile here until it has its code.
    static func expected(_ error: StoreError) -> OSStatus {
        switch error {
        case .itemNotFound, .noVault: errSecItemNotFound
        case .duplicateItem: errSecDuplicateItem
        case .locked, .collectionLocked, .passphraseRequired, .interactionNotAllowed: errSecInteractionNotAllowed
        case .userCancelled: errSecUserCanceled
        case .authenticationFailed, .wrongPassphrase: errSecAuthFailed
        case .valueTooLarge, .invalidArgument: errSecParam
        case .unavailable, .boundToAnotherMachine: errSecNotAvailable
        case .corrupted, .tampered, .unsupportedFormatVersion: errSecDecode
        case .io, .insecurePermissions, .untrusted, .orphanedKeyFile, .outcomeUnknown, .partlyApplied: errSecIO
        }
    }

    static let everyFailure: [StoreError] = [
        .itemNotFound, .duplicateItem, .locked, .wrongPassphrase, .passphraseRequired, .valueTooLarge(limit: 1), .invalidArgument("x"),
        .corrupted("x"), .tampered("x"), .unsupportedFormatVersion(9), .boundToAnotherMachine, .insecurePermissions(path: "/x"),
        .untrusted(path: "/x", reason: "x"), .noVault(path: "/x"), .orphanedKeyFile(vault: "/x", keyFile: "/x.key"), .unavailable("x"),
        .io("x"), .userCancelled, .authenticationFailed, .interactionNotAllowed, .collectionLocked("x"), .outcomeUnknown("x"),
        .partlyApplied("x"),
    ]

    @Test("every failure maps to one status, the same wherever it is reported", arguments: everyFailure)
    func oneTable(_ error: StoreError) {
        #expect(OSStatus(error.keychainStatus) == Self.expected(error), "\(error)")
    }
}
