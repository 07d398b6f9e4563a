/// Why a Locksmith operation failed; `rawValue` is the message. Unlike Locksmith on Apple
/// platforms, every failure is thrown: one without a case of its own is `.undefined`, never
/// a silent success.
public enum LocksmithError: String, Error, Sendable, CaseIterable {
    /// Failed to allocate memory.
    case allocate = "Failed to allocate memory."
    /// Authorization/Authentication failed.
    case authFailed = "Authorization/Authentication failed."
    /// Unable to decode the provided data.
    case decode = "Unable to decode the provided data."
    /// The item already exists.
    case duplicate = "The item already exists."
    /// Interaction with the Security Server is not allowed.
    case interactionNotAllowed = "Interaction with the Security Server is not allowed."
    /// No error.
    case noError = "No error."
    /// No trust results are available.
    case notAvailable = "No trust results are available."
    /// The item cannot be found.
    case notFound = "The item cannot be found."
    /// One or more parameters passed to the function were not valid.
    case param = "One or more parameters passed to the function were not valid."
    /// The request was not set.
    case requestNotSet = "The request was not set"
    /// The type was not found.
    case typeNotFound = "The type was not found"
    /// Unable to clear the keychain.
    case unableToClear = "Unable to clear the keychain"
    /// An undefined error occurred.
    case undefined = "An undefined error occurred"
    /// Function or operation not implemented.
    case unimplemented = "Function or operation not implemented."

    /// The error for a keychain status, as Locksmith maps them; nil for success and for
    /// statuses it has no case for (which callers then report as `.undefined`).
    init?(fromStatusCode code: Int) {
        switch code {
        case -108: self = .allocate
        case -25293: self = .authFailed
        case -26275: self = .decode
        case -25299: self = .duplicate
        case -25308: self = .interactionNotAllowed
        case -25300: self = .notFound
        case -25291: self = .notAvailable
        case -50: self = .param
        case -4: self = .unimplemented
        default: return nil
        }
    }
}
