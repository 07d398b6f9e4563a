import Foundation
import KeychainCore

/// The one place failures become UICKeyChainStore's `NSError`s: its own codes for arguments
/// (1), conversions (-67594) and the unexpected (-99999), and the keychain status a store
/// failure corresponds to on Apple platforms, with a message that names the cause (never a value).
enum ErrorMapping {
    static func argument(_ message: String) -> NSError {
        make(UICKeyChainStoreErrorCode.invalidArguments.rawValue, message)
    }

    static func conversion() -> NSError {
        make(-67594, "failed to convert the data to a string (not UTF-8)")
    }

    static func error(_ error: any Error) -> NSError {
        if let error = error as? StoreError { return make(Int(error.keychainStatus), error.description) }
        let bridged = error as NSError
        return bridged.domain == UICKeyChainStoreErrorDomain ? bridged : make(-99999, "Unexpected error has occurred.")
    }

    private static func make(_ code: Int, _ message: String) -> NSError {
        NSError(domain: UICKeyChainStoreErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: message])
    }
}
