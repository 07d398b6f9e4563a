import Foundation

/// Success.
public let errSecSuccess: OSStatus = 0
/// The function or operation is not implemented here.
public let errSecUnimplemented: OSStatus = -4
/// An I/O error.
public let errSecIO: OSStatus = -36
/// One or more parameters passed to the function were not valid.
public let errSecParam: OSStatus = -50
/// Memory could not be allocated.
public let errSecAllocate: OSStatus = -108
/// The user cancelled the operation.
public let errSecUserCanceled: OSStatus = -128
/// A bad parameter or an invalid state for the operation.
public let errSecBadReq: OSStatus = -909
/// An internal component failed.
public let errSecInternalComponent: OSStatus = -2070
/// No keychain is available.
public let errSecNotAvailable: OSStatus = -25291
/// The user name or passphrase is not correct.
public let errSecAuthFailed: OSStatus = -25293
/// The item already exists.
public let errSecDuplicateItem: OSStatus = -25299
/// The item cannot be found.
public let errSecItemNotFound: OSStatus = -25300
/// Interaction is not allowed with the Security Server (the keychain is locked, or the item needs a proof).
public let errSecInteractionNotAllowed: OSStatus = -25308
/// Unable to decode the provided data.
public let errSecDecode: OSStatus = -26275
/// A required entitlement is missing.
public let errSecMissingEntitlement: OSStatus = -34018

/// A human-readable message for `status` (the second argument is reserved and ignored).
@discardableResult
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    let text: String
    switch status {
    case errSecSuccess: text = "No error."
    case errSecUnimplemented: text = "Function or operation not implemented."
    case errSecIO: text = "I/O error."
    case errSecParam: text = "One or more parameters passed to a function were not valid."
    case errSecAllocate: text = "Failed to allocate memory."
    case errSecUserCanceled: text = "User canceled the operation."
    case errSecBadReq: text = "Bad parameter or invalid state for operation."
    case errSecInternalComponent: text = "An internal component failed."
    case errSecNotAvailable: text = "No keychain is available."
    case errSecAuthFailed: text = "The user name or passphrase you entered is not correct."
    case errSecDuplicateItem: text = "The specified item already exists in the keychain."
    case errSecItemNotFound: text = "The specified item could not be found in the keychain."
    case errSecInteractionNotAllowed: text = "User interaction is not allowed."
    case errSecDecode: text = "Unable to decode the provided data."
    case errSecMissingEntitlement: text = "A required entitlement isn't present."
    default: text = "OSStatus \(status)"
    }
    return text as NSString
}
