/// Why a Locksmith operation failed; `rawValue` is the message. Unlike Locksmith on Apple
/// platforms, every failure is thrown: one without a case of its own is `.undefined`, never
/// a silent success.
public enum LocksmithError: String, Error, Sendable, CaseIterable {
    case allocate = "Failed to allocate memory."
    case authFailed = "Authorization/Authentication failed."
    case decode = "Unable to decode the provided data."
    case duplicate = "The item already exists."
    case interactionNotAllowed = "Interaction with the Security Server is not allowed."
    case noError = "No error."
    case notAvailable = "No trust results are available."
    case notFound = "The item cannot be found."
    case param = "One or more parameters passed to the function were not valid."
    case requestNotSet = "The request was not set"
    case typeNotFound = "The type was not found"
    case unableToClear = "Unable to clear the keychain"
    case undefined = "An undefined error occurred"
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
