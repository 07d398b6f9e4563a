import Foundation
import KeychainCore

/// Which proof of presence an access control asks for.
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The user's presence (here: the vault passphrase, typed on the terminal or through LocalAuthentication).
    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    /// Any enrolled biometry (refused unless a biometric authenticator is installed).
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    /// The currently enrolled biometry (refused unless a biometric authenticator is installed).
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    /// The device passcode (here: the vault passphrase).
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    /// Either of the constraints given.
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    /// All of the constraints given.
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    /// Deprecated spelling of ``biometryAny``.
    public static let touchIDAny = biometryAny
    /// Deprecated spelling of ``biometryCurrentSet``.
    public static let touchIDCurrentSet = biometryCurrentSet
}

/// An item's accessibility bound to a proof of presence (`kSecAttrAccessControl`), mapped to
/// the vault's presence sealing.
public final class SecAccessControl: @unchecked Sendable {
    let accessibility: Accessibility
    let control: AccessControl

    init(accessibility: Accessibility, control: AccessControl) {
        self.accessibility = accessibility
        self.control = control
    }
}

/// An access control for items of `protection` (a `kSecAttrAccessible...` value) that need
/// the proof `flags` name; nil (with `error` set) for a protection or flags it cannot be.
@discardableResult
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    func fail() -> SecAccessControl? {
        error?.pointee = Unmanaged.passRetained(NSError(domain: "NSOSStatusErrorDomain", code: Int(errSecParam)))
        return nil
    }
    guard let raw = ItemRequest.string(protection), let accessibility = Accessibility(rawValue: raw) else { return fail() }
    let control: AccessControl
    if flags.contains(.biometryCurrentSet) {
        control = .biometryCurrentSet
    } else if flags.contains(.biometryAny) {
        control = .biometryAny
    } else if flags.contains(.devicePasscode) && !flags.contains(.userPresence) {
        control = .devicePasscode
    } else if flags.contains(.userPresence) || flags.contains(.devicePasscode) {
        control = .userPresence
    } else {
        return fail()
    }
    return SecAccessControl(accessibility: accessibility, control: control)
}
