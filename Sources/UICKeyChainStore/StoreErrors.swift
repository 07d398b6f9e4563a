import Foundation
import KeychainCore

/// The one place failures become UICKeyChainStore's `NSError`s: its own codes for arguments
/// (1), conversions (-67594) and the unexpected (-99999), and the keychain status a store
/// failure corresponds to on Apple platforms, with a message that names the cause (never a value).
enum StoreErrors {
    static func argument(_ message: String) -> NSError {
        make(UICKeyChainStoreErrorCode.invalidArguments.rawValue, message)
    }

    static func conversion() -> NSError {
        make(-67594, "failed to convert the data to a string (not UTF-8)")
    }

    static func error(_ error: any Error) -> NSError {
        if let error = error as? StoreError { return make(status(of: error), error.description) }
        let bridged = error as NSError
        return bridged.domain == UICKeyChainStoreErrorDomain ? bridged : make(-99999, "Unexpected error has occurred.")
    }

    /// The `OSStatus` Apple's keychain reports in the same situation.
    static func status(of error: StoreError) -> Int {
        switch error {
        case .itemNotFound: -25300            // errSecItemNotFound
        case .duplicateItem: -25299           // errSecDuplicateItem
        case .locked, .passphraseRequired, .interactionNotAllowed, .boundToAnotherMachine: -25308  // errSecInteractionNotAllowed
        case .userCancelled: -128             // errSecUserCanceled
        case .authenticationFailed, .wrongPassphrase: -25293  // errSecAuthFailed
        case .valueTooLarge, .invalidArgument: -50  // errSecParam
        case .unavailable: -25291             // errSecNotAvailable
        case .corrupted, .tampered, .unsupportedFormatVersion: -26275  // errSecDecode
        case .insecurePermissions: -61        // errSecWrPerm
        case .io: -36                         // errSecIO
        }
    }

    private static func make(_ code: Int, _ message: String) -> NSError {
        NSError(domain: UICKeyChainStoreErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: message])
    }
}
