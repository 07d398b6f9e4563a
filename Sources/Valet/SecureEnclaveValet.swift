import Foundation
import KeychainCore
import ValetNaming

/// A Valet whose items can be read only after the user proves presence, with Valet 5's API.
///
/// Linux has no Secure Enclave. Here each item's value is sealed to the vault's presence key,
/// whose private half only the vault passphrase unwraps; a read asks the presence authenticator
/// (by default the passphrase on the controlling terminal; see
/// `KeychainCore.PresenceAuthentication`) every time. Writes, `containsObject` and removals
/// never ask. As on Apple platforms, the items need a passcode: a vault without a passphrase
/// cannot hold them, and removing the passphrase destroys them. Only the vault store supports
/// them.
public final class SecureEnclaveValet: NSObject, Sendable {

    // MARK: Factories

    /// A Secure Enclave Valet in the sandbox of `identifier`.
    public class func valet(with identifier: Identifier, accessControl: SecureEnclaveAccessControl) -> SecureEnclaveValet {
        findOrCreate(.secureEnclave(with: identifier, accessControl: accessControl, singlePrompt: false))
    }

    /// A Secure Enclave Valet whose items every program of the user naming the group can read (after the proof).
    public class func sharedGroupValet(with groupIdentifier: SharedGroupIdentifier, identifier: Identifier? = nil, accessControl: SecureEnclaveAccessControl) -> SecureEnclaveValet
    {
        findOrCreate(.secureEnclave(sharedGroup: groupIdentifier, identifier: identifier, accessControl: accessControl, singlePrompt: false))
    }

    private static let cache = WeakStorage<SecureEnclaveValet>()

    private class func findOrCreate(_ address: ValetAddress) -> SecureEnclaveValet {
        let store = ValetStore.chosen
        return cache.object(forKey: ValetStore.identity(of: store) + "|" + address.service.cacheKey) {
            SecureEnclaveValet(Sandbox(address, store: store))
        }
    }

    private init(_ sandbox: Sandbox) {
        self.sandbox = sandbox
        self.identifier = sandbox.identifier
        self.accessControl = sandbox.configuration.accessControl!
        super.init()
    }

    @available(*, unavailable)
    public override init() {
        fatalError("Use the class methods above to create usable SecureEnclaveValet objects")
    }

    /// Equal when the service strings are.
    public static func == (lhs: SecureEnclaveValet, rhs: SecureEnclaveValet) -> Bool { lhs.service == rhs.service }

    public override var hash: Int { service.description.hashValue }

    /// Agrees with `==` (and `hash`), for `Set`, `XCTAssertEqual` and `NSObject` equality.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecureEnclaveValet else { return false }
        return self == other
    }

    /// The identifier the valet was made with.
    public let identifier: Identifier
    /// What a read must prove.
    public let accessControl: SecureEnclaveAccessControl

    let sandbox: Sandbox
    var service: Service { sandbox.service }

    // MARK: Access

    /// Whether items can be written and read here; never asks for a proof. True when a plain
    /// whenPasscodeSetThisDeviceOnly Valet of the same sandbox can (the vault has a passphrase
    /// and is unlocked) and the store supports access control.
    public func canAccessKeychain() -> Bool {
        sandbox.canAccessWithPasscode()
    }

    /// Stores `object` for `key`; no proof is needed to write.
    /// - Throws: ``KeychainError/emptyKey``, ``KeychainError/emptyValue``, or
    ///   ``KeychainError/couldNotAccessKeychain`` (no passphrase, locked, store without access control,
    ///   or a biometric access control without a biometric authenticator).
    public func setObject(_ object: Data, forKey key: String) throws(KeychainError) {
        try sandbox.setObject(object, forKey: key)
    }

    /// Stores the UTF-8 bytes of `string` for `key`.
    public func setString(_ string: String, forKey key: String) throws(KeychainError) {
        try sandbox.setString(string, forKey: key)
    }

    /// The value for `key`, after the user proves presence; `userPrompt` is shown to them.
    /// - Throws: ``KeychainError/userCancelled`` if the proof is cancelled or wrong,
    ///   ``KeychainError/itemNotFound`` if there is no value (tell the two apart with
    ///   ``containsObject(forKey:)``), ``KeychainError/couldNotAccessKeychain`` otherwise.
    public func object(forKey key: String, withPrompt userPrompt: String) throws(KeychainError) -> Data {
        try sandbox.object(forKey: key, authentication: AuthenticationContext(reason: userPrompt))
    }

    /// The value for `key` as UTF-8 text, after the user proves presence.
    /// - Throws: as ``object(forKey:withPrompt:)``.
    public func string(forKey key: String, withPrompt userPrompt: String) throws(KeychainError) -> String {
        try sandbox.string(forKey: key, authentication: AuthenticationContext(reason: userPrompt))
    }

    /// The value for `key`, after the user proves presence with a default prompt: the form
    /// Valet offers where LocalAuthentication is missing, so code written for either branch of
    /// `#if canImport(LocalAuthentication)` compiles.
    /// - Throws: as ``object(forKey:withPrompt:)``.
    public func object(forKey key: String) throws(KeychainError) -> Data {
        try object(forKey: key, withPrompt: "")
    }

    /// The value for `key` as UTF-8 text, after the user proves presence with a default prompt.
    /// - Throws: as ``object(forKey:withPrompt:)``.
    public func string(forKey key: String) throws(KeychainError) -> String {
        try string(forKey: key, withPrompt: "")
    }

    /// Whether a value is stored for `key`. Never asks for a proof.
    public func containsObject(forKey key: String) throws(KeychainError) -> Bool {
        try sandbox.containsObject(forKey: key)
    }

    /// Removes the value for `key` (no proof needed); removing an absent key succeeds.
    public func removeObject(forKey key: String) throws(KeychainError) {
        try sandbox.removeObject(forKey: key)
    }

    /// Removes every value of this Valet.
    public func removeAllObjects() throws(KeychainError) {
        try sandbox.removeAllObjects()
    }

    // MARK: Migration

    /// Moves the items matching `query` into this Valet (behind the proof of presence).
    /// - Throws: as ``Valet/migrateObjects(matching:removeOnCompletion:)``.
    public func migrateObjects(matching query: [String: AnyHashable], removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(matching: query, removeOnCompletion: removeOnCompletion)
    }

    /// Moves every item of `valet` into this Valet.
    /// - Throws: as ``Valet/migrateObjects(from:removeOnCompletion:)``.
    public func migrateObjects(from valet: Valet, removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(from: valet.sandbox, removeOnCompletion: removeOnCompletion)
    }
}
