import Foundation
import KeychainCore
import ValetNaming

/// A ``SecureEnclaveValet`` that asks for the proof of presence once: the proof (the unwrapped
/// presence key) is kept in this instance's `KeychainCore.AuthenticationContext` until
/// ``requirePromptOnNextAccess()``. Writes, `containsObject` and removals never use or need it.
/// With Valet 5's API, whose throwing methods are untyped.
public final class SinglePromptSecureEnclaveValet: NSObject, @unchecked Sendable {
    // @unchecked: `context` is replaced only under `lock`, and AuthenticationContext is thread-safe.

    // MARK: Factories

    /// The valet for `identifier` and `accessControl`: the same object for equal arguments.
    public class func valet(with identifier: Identifier, accessControl: SecureEnclaveAccessControl) -> SinglePromptSecureEnclaveValet {
        findOrCreate(.secureEnclave(with: identifier, accessControl: accessControl, singlePrompt: true))
    }

    /// The valet for a shared group and `accessControl`: the same object for equal arguments.
    public class func sharedGroupValet(with groupIdentifier: SharedGroupIdentifier, identifier: Identifier? = nil, accessControl: SecureEnclaveAccessControl)
        -> SinglePromptSecureEnclaveValet
    {
        findOrCreate(.secureEnclave(sharedGroup: groupIdentifier, identifier: identifier, accessControl: accessControl, singlePrompt: true))
    }

    private static let cache = WeakStorage<SinglePromptSecureEnclaveValet>()

    private class func findOrCreate(_ address: ValetAddress) -> SinglePromptSecureEnclaveValet {
        let store = ValetStore.chosen
        return cache.object(forKey: ValetStore.identity(of: store) + "|" + address.service.cacheKey) {
            SinglePromptSecureEnclaveValet(Sandbox(address, store: store))
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
        fatalError("Use the class methods above to create usable SinglePromptSecureEnclaveValet objects")
    }

    /// Whether two valets address the same items.
    public static func == (lhs: SinglePromptSecureEnclaveValet, rhs: SinglePromptSecureEnclaveValet) -> Bool { lhs.service == rhs.service }

    public override var hash: Int { service.description.hashValue }

    /// Agrees with `==` (and `hash`), for `Set`, `XCTAssertEqual` and `NSObject` equality.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SinglePromptSecureEnclaveValet else { return false }
        return self == other
    }

    /// The identifier the valet was made with.
    public let identifier: Identifier
    /// What the first read must prove.
    public let accessControl: SecureEnclaveAccessControl

    let sandbox: Sandbox
    var service: Service { sandbox.service }
    private let lock = NSLock()
    private var context = AuthenticationContext(reusesProof: true)

    /// The shared context, with `userPrompt` as its reason for the next prompt.
    private func sharedContext(prompt userPrompt: String) -> AuthenticationContext {
        lock.withLock {
            context.localizedReason = userPrompt
            return context
        }
    }

    // MARK: Access

    /// Whether items can be written and read here; never asks for a proof.
    public func canAccessKeychain() -> Bool {
        sandbox.canAccessWithPasscode()
    }

    /// Stores `object` under `key`; needs no proof.
    /// - Throws: ``KeychainError``.
    public func setObject(_ object: Data, forKey key: String) throws {
        try sandbox.setObject(object, forKey: key)
    }

    /// Stores `string` under `key`; needs no proof.
    /// - Throws: ``KeychainError``.
    public func setString(_ string: String, forKey key: String) throws {
        try sandbox.setString(string, forKey: key)
    }

    /// The value for `key`; asks for the proof only if this instance holds none yet.
    /// - Throws: ``KeychainError/userCancelled``, ``KeychainError/itemNotFound``, ``KeychainError/couldNotAccessKeychain``.
    public func object(forKey key: String, withPrompt userPrompt: String) throws -> Data {
        try sandbox.object(forKey: key, authentication: sharedContext(prompt: userPrompt))
    }

    /// The string under `key`; asks for the proof (with `userPrompt`) once, until ``requirePromptOnNextAccess()``.
    /// - Throws: ``KeychainError``.
    public func string(forKey key: String, withPrompt userPrompt: String) throws -> String {
        try sandbox.string(forKey: key, authentication: sharedContext(prompt: userPrompt))
    }

    /// The value for `key` with a default prompt (Valet's form where LocalAuthentication is missing).
    /// - Throws: as ``object(forKey:withPrompt:)``.
    public func object(forKey key: String) throws -> Data {
        try object(forKey: key, withPrompt: "")
    }

    /// The value for `key` as UTF-8 text, with a default prompt.
    /// - Throws: as ``object(forKey:withPrompt:)``.
    public func string(forKey key: String) throws -> String {
        try string(forKey: key, withPrompt: "")
    }

    /// Whether a value is stored for `key`. Never asks for a proof.
    public func containsObject(forKey key: String) throws -> Bool {
        try sandbox.containsObject(forKey: key)
    }

    /// Forgets the proof this instance holds: the next read asks again.
    public func requirePromptOnNextAccess() {
        lock.withLock {
            context.invalidate()
            context = AuthenticationContext(reusesProof: true)
        }
    }

    /// Every key of this Valet (never the canary). Keys are not behind the proof, so this never asks.
    public func allKeys(userPrompt: String) throws -> Set<String> {
        try sandbox.allKeys()
    }

    /// Every key of this Valet (Valet's form where LocalAuthentication is missing); never asks.
    public func allKeys() throws -> Set<String> {
        try sandbox.allKeys()
    }

    /// Removes the value under `key`; needs no proof.
    /// - Throws: ``KeychainError``.
    public func removeObject(forKey key: String) throws {
        try sandbox.removeObject(forKey: key)
    }

    /// Removes every value of this valet.
    /// - Throws: ``KeychainError``.
    public func removeAllObjects() throws {
        try sandbox.removeAllObjects()
    }

    // MARK: Migration

    /// Moves the items `query` finds into this valet, all or nothing.
    /// - Throws: ``MigrationError``.
    public func migrateObjects(matching query: [String: AnyHashable], removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(matching: query, removeOnCompletion: removeOnCompletion)
    }

    /// Moves every item of `valet` into this one, all or nothing.
    /// - Throws: ``MigrationError``.
    public func migrateObjects(from valet: Valet, removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(from: valet.sandbox, removeOnCompletion: removeOnCompletion)
    }
}
