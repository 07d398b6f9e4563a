import KeychainCore

/// An error a handler answers a call with: a D-Bus error name of the specification (or a
/// standard one) and a message for the user. Messages never carry a secret, an attribute value
/// or a label: only what was wrong.
struct ServiceError: Error, CustomStringConvertible {
    /// The D-Bus error name, such as `org.freedesktop.Secret.Error.IsLocked`.
    let name: String
    let message: String

    var description: String { "\(name): \(message)" }

    static func noSuchObject(_ path: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: "no such object: \(path)")
    }
    static func isLocked(_ what: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.Secret.Error.IsLocked", message: "\(what) is locked: unlock the vault (keychain unlock) first")
    }
    static func noSession(_ why: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.Secret.Error.NoSession", message: why)
    }
    static func invalidArgs(_ why: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: why)
    }
    static func notSupported(_ why: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.NotSupported", message: why)
    }
    static func accessDenied(_ why: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.AccessDenied", message: why)
    }
    static func unknownMethod(_ interface: String, _ member: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(member) in interface \(interface) here")
    }
    static func unknownProperty(_ interface: String, _ property: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(property) in interface \(interface) here")
    }
    static func propertyReadOnly(_ property: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "the property \(property) is read-only")
    }
    static func failed(_ why: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.Failed", message: why)
    }
    static func limitsExceeded(_ why: String) -> ServiceError {
        ServiceError(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: why)
    }
}

extension ServiceError {
    /// The store's error as the specification names it: a locked class is `IsLocked`, a
    /// missing item `NoSuchObject`, bad input `InvalidArgs`; the rest `Failed`, with the
    /// store's own words (which never hold a value).
    init(_ error: StoreError, path: String) {
        switch error {
        case .locked, .collectionLocked, .passphraseRequired, .interactionNotAllowed:
            self = .isLocked(path)
        case .itemNotFound:
            self = .noSuchObject(path)
        case .invalidArgument, .valueTooLarge:
            self = .invalidArgs(error.description)
        default:
            self = .failed(error.description)
        }
    }
}
