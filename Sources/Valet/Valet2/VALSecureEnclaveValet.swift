import Foundation
import KeychainCore
import ValetNaming

/// Valet 2's `VALSecureEnclaveValet`, as Swift imports it: items every read of which needs the
/// user's proof of presence (on Linux, the vault passphrase through the installed
/// `KeychainCore.PresenceAuthenticator`), the same items Valet 5's ``SecureEnclaveValet``
/// with the same identifier and access control reads.
open class VALSecureEnclaveValet: VALValet, @unchecked Sendable {
    /// Whether such items can be stored here: when the default vault has a passphrase.
    open class func supportsSecureEnclaveKeychainItems() -> Bool {
        (try? ValetStore.current())?.supportsAccessControl ?? false
    }

    /// A valet whose reads need `accessControl`; nil for an empty identifier.
    public convenience init?(identifier: String, accessControl: VALAccessControl) {
        guard let name = Identifier(nonEmpty: identifier) else { return nil }
        self.init(
            address: .secureEnclave(with: name, accessControl: accessControl.modern, singlePrompt: Self.isSinglePrompt),
            identifier: identifier, shared: false, accessibility: .whenPasscodeSetThisDeviceOnly)
    }

    /// A shared-access-group valet whose reads need `accessControl`; nil for an empty identifier.
    public convenience init?(sharedAccessGroupIdentifier: String, accessControl: VALAccessControl) {
        guard let group = Self.sharedGroup(sharedAccessGroupIdentifier) else { return nil }
        self.init(
            address: .secureEnclave(sharedGroup: group, identifier: nil, accessControl: accessControl.modern, singlePrompt: Self.isSinglePrompt),
            identifier: sharedAccessGroupIdentifier, shared: true, accessibility: .whenPasscodeSetThisDeviceOnly)
    }

    /// Valet 2's deprecated form: user presence.
    @available(*, deprecated, message: "Use backwards-compatible init(identifier:accessControl:) with .userPresence instead")
    public convenience init?(identifier: String) {
        self.init(identifier: identifier, accessControl: .userPresence)
    }

    /// Valet 2's deprecated form: user presence (the accessibility is always
    /// whenPasscodeSetThisDeviceOnly for these items).
    @available(*, deprecated, message: "Use backwards-compatible init(sharedAccessGroupIdentifier:accessControl:) with .userPresence instead")
    public convenience init?(sharedAccessGroupIdentifier: String) {
        self.init(sharedAccessGroupIdentifier: sharedAccessGroupIdentifier, accessControl: .userPresence)
    }

    class var isSinglePrompt: Bool { false }

    /// The inherited `init?(identifier:accessibility:)` makes a user-presence valet, as Valet 2's
    /// deprecated initializer did.
    override class func address(identifier: String, shared: Bool, accessibility: VALAccessibility) -> ValetAddress? {
        if shared {
            guard let group = sharedGroup(identifier) else { return nil }
            return .secureEnclave(sharedGroup: group, identifier: nil, accessControl: .userPresence, singlePrompt: isSinglePrompt)
        }
        guard let name = Identifier(nonEmpty: identifier) else { return nil }
        return .secureEnclave(with: name, accessControl: .userPresence, singlePrompt: isSinglePrompt)
    }

    /// What a read must prove.
    public var accessControl: VALAccessControl {
        switch sandbox.configuration.accessControl {
        case .biometricAny?: .touchIDAnyFingerprint
        case .biometricCurrentSet?: .touchIDCurrentFingerprintSet
        case .devicePasscode?: .devicePasscode
        case .userPresence?, nil: .userPresence
        }
    }

    /// The authentication a read uses: a fresh prompt each time (the single-prompt valet keeps one).
    func authentication(prompt: String?) -> AuthenticationContext {
        AuthenticationContext(reason: prompt ?? "")
    }

    // MARK: Reads behind the proof

    open override func object(forKey key: String) -> Data? { object(forKey: key, userPrompt: nil) }

    open override func string(forKey key: String) -> String? { string(forKey: key, userPrompt: nil) }

    /// The value for `key` after the user proves presence; nil when absent, cancelled or refused.
    open func object(forKey key: String, userPrompt: String?) -> Data? {
        object(forKey: key, userPrompt: userPrompt, userCancelled: nil)
    }

    /// As ``object(forKey:userPrompt:)``; `userCancelled` says whether nil came from the user
    /// cancelling (or failing) the proof.
    open func object(forKey key: String, userPrompt: String?, userCancelled: UnsafeMutablePointer<ObjCBool>?) -> Data? {
        read(userCancelled) { () throws(KeychainError) in try sandbox.object(forKey: key, authentication: authentication(prompt: userPrompt)) }
    }

    /// The text for `key` after the user proves presence; nil when absent, cancelled or refused.
    open func string(forKey key: String, userPrompt: String?) -> String? {
        string(forKey: key, userPrompt: userPrompt, userCancelled: nil)
    }

    /// As ``string(forKey:userPrompt:)``, saying through `userCancelled` whether the user cancelled.
    open func string(forKey key: String, userPrompt: String?, userCancelled: UnsafeMutablePointer<ObjCBool>?) -> String? {
        read(userCancelled) { () throws(KeychainError) in try sandbox.string(forKey: key, authentication: authentication(prompt: userPrompt)) }
    }

    private func read<T>(_ userCancelled: UnsafeMutablePointer<ObjCBool>?, _ body: () throws(KeychainError) -> T) -> T? {
        userCancelled?.pointee = false
        do {
            return try body()
        } catch .userCancelled {
            userCancelled?.pointee = true
            return nil
        } catch {
            return nil
        }
    }

    /// Unavailable in Valet 2 for these valets (listing would need no proof, as Apple's
    /// keychain cannot list them without one); empty here.
    @available(*, unavailable)
    open override func allKeys() -> Set<AnyHashable> { [] }

    /// Unavailable in Valet 2 for these valets.
    @available(*, unavailable)
    open override func removeAllObjects() -> Bool { false }
}

/// Valet 2's `VALSinglePromptSecureEnclaveValet`: one proof serves every read of the instance
/// until ``requirePromptOnNextAccess()``.
open class VALSinglePromptSecureEnclaveValet: VALSecureEnclaveValet, @unchecked Sendable {
    private let lock = NSLock()
    private var context = AuthenticationContext(reusesProof: true)

    override class var isSinglePrompt: Bool { true }

    override func authentication(prompt: String?) -> AuthenticationContext {
        lock.withLock {
            context.localizedReason = prompt ?? ""
            return context
        }
    }

    /// Forgets the proof this instance holds: the next read asks again.
    open func requirePromptOnNextAccess() {
        lock.withLock {
            context.invalidate()
            context = AuthenticationContext(reusesProof: true)
        }
    }
}
