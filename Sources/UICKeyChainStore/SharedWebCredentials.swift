import Foundation

// Safari's Shared Web Credentials do not exist on Linux. The calls exist so that code written
// for iOS compiles, and each completes at once with an error that says so (code -4,
// errSecUnimplemented), never with made-up credentials.
extension UICKeyChainStore {
    static func sharedWebCredentialsUnavailable() -> NSError {
        NSError(
            domain: UICKeyChainStoreErrorDomain, code: -4,
            userInfo: [NSLocalizedDescriptionKey: "Shared Web Credentials are not available on this platform (there is no Safari on Linux)."])
    }

    /// Completes with `(nil, nil, error)`: not available on this platform.
    public func sharedPassword(completion: (@Sendable (String?, String?, Error?) -> Void)?) {
        completion?(nil, nil, Self.sharedWebCredentialsUnavailable())
    }

    /// Completes with `(nil, error)`: not available on this platform.
    public func sharedPassword(forAccount account: String, completion: (@Sendable (String?, Error?) -> Void)?) {
        completion?(nil, Self.sharedWebCredentialsUnavailable())
    }

    /// Completes with an error: not available on this platform. Nothing is stored.
    public func setSharedPassword(_ password: String?, forAccount account: String, completion: (@Sendable (Error?) -> Void)?) {
        completion?(Self.sharedWebCredentialsUnavailable())
    }

    /// Completes with an error: not available on this platform.
    public func removeSharedPassword(forAccount account: String, completion: (@Sendable (Error?) -> Void)?) {
        completion?(Self.sharedWebCredentialsUnavailable())
    }

    /// Completes with `([], error)`: not available on this platform.
    public class func requestSharedWebCredential(completion: (@Sendable ([[String: String]], Error?) -> Void)?) {
        completion?([], sharedWebCredentialsUnavailable())
    }

    /// Completes with `([], error)`: not available on this platform.
    public class func requestSharedWebCredential(forDomain domain: String?, account: String?, completion: (@Sendable ([[String: String]], Error?) -> Void)?) {
        completion?([], sharedWebCredentialsUnavailable())
    }
}
