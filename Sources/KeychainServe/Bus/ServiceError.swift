import KeychainCore

/// An error a handler answers a call with: a D-Bus error name of the specification (or a
/// standard one) and a message for the user. Messages never carry a secret, an attribute value
/// or a label: only what was wrong.
struct ServiceError: Error, CustomStringConvertible {
    /// The error names this daemon answers with: the specification's three, then D-Bus's own.
    enum Name: String {
        case noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
        case isLocked = "org.freedesktop.Secret.Error.IsLocked"
        case noSession = "org.freedesktop.Secret.Error.NoSession"
        case invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        case notSupported = "org.freedesktop.DBus.Error.NotSupported"
        case accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        case unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        case unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        case limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
        case failed = "org.freedesktop.DBus.Error.Failed"
    }

    let name: Name
    let message: String

    init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    var description: String { "\(name.rawValue): \(message)" }

    // The errors whose wording names what was missing, worded once.
    static func noSuchObject(_ path: String) -> ServiceError { ServiceError(.noSuchObject, "no such object: \(path)") }
    static func isLocked(_ what: String) -> ServiceError { ServiceError(.isLocked, "\(what) is locked: unlock the vault (keychain unlock) first") }
    static func unknownMethod(_ interface: String, _ member: String) -> ServiceError { ServiceError(.unknownMethod, "no method \(member) in interface \(interface) here") }
    // A property that does not exist, or may not be set, is InvalidArgs, as gnome-keyring
    // (and every GDBus service) answers, which clients match on.
    static func unknownProperty(_ interface: String, _ name: String) -> ServiceError { ServiceError(.invalidArgs, "no property \(name) in \(interface) here") }
    static func propertyReadOnly(_ property: String) -> ServiceError { ServiceError(.invalidArgs, "the property \(property) is read-only") }
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
            self = ServiceError(.invalidArgs, error.description)
        default:
            self = ServiceError(.failed, error.description)
        }
    }
}
