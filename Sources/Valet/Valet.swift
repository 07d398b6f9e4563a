import Foundation
import KeychainCore
import ValetNaming

/// Reads and writes keychain items in a sandbox defined by a flavour, an identifier (or a shared
/// group) and an accessibility value, exactly as Valet 5 does, backed on Linux by the embedded
/// encrypted vault (or another `KeychainCore.Store` chosen with ``ValetStore``).
///
/// Instances come only from the factories; equal configurations return the identical instance.
/// Every method is thread-safe, and several processes may use one vault at once.
public final class Valet: NSObject, Sendable {

    // MARK: Factories

    /// A Valet that reads and writes items on this machine, in the sandbox of `identifier`.
    public class func valet(with identifier: Identifier, accessibility: Accessibility) -> Valet {
        findOrCreate(.valet(with: identifier, accessibility: accessibility))
    }

    /// A Valet whose items are marked synchronizable and kept apart from local items. (Linux
    /// has no iCloud Keychain: the items stay on this machine.)
    public class func iCloudValet(with identifier: Identifier, accessibility: CloudAccessibility) -> Valet {
        findOrCreate(.iCloudValet(with: identifier, accessibility: accessibility))
    }

    /// A Valet whose items every program of the user naming `groupIdentifier` can read.
    public class func sharedGroupValet(with groupIdentifier: SharedGroupIdentifier, identifier: Identifier? = nil, accessibility: Accessibility) -> Valet {
        findOrCreate(.sharedGroupValet(with: groupIdentifier, identifier: identifier, accessibility: accessibility))
    }

    /// A shared-group Valet whose items are marked synchronizable.
    public class func iCloudSharedGroupValet(with groupIdentifier: SharedGroupIdentifier, identifier: Identifier? = nil, accessibility: CloudAccessibility) -> Valet {
        findOrCreate(.iCloudSharedGroupValet(with: groupIdentifier, identifier: identifier, accessibility: accessibility))
    }

    /// A Valet whose service string is `identifier` itself.
    /// - Warning: this bypasses the sandbox: another Valet type with the same identifier sees the same items.
    public class func valet(withExplicitlySet identifier: Identifier, accessibility: Accessibility) -> Valet {
        findOrCreate(.valet(withExplicitlySet: identifier, accessibility: accessibility))
    }

    /// An iCloud Valet whose service string is `identifier` itself.
    public class func iCloudValet(withExplicitlySet identifier: Identifier, accessibility: CloudAccessibility) -> Valet {
        findOrCreate(.iCloudValet(withExplicitlySet: identifier, accessibility: accessibility))
    }

    /// A shared-group Valet whose service string is the group identifier itself.
    public class func sharedGroupValet(withExplicitlySet identifier: SharedGroupIdentifier, accessibility: Accessibility) -> Valet {
        findOrCreate(.sharedGroupValet(withExplicitlySet: identifier, accessibility: accessibility))
    }

    /// An iCloud shared-group Valet whose service string is the group identifier itself.
    public class func iCloudSharedGroupValet(withExplicitlySet identifier: SharedGroupIdentifier, accessibility: CloudAccessibility) -> Valet {
        findOrCreate(.iCloudSharedGroupValet(withExplicitlySet: identifier, accessibility: accessibility))
    }

    private static let identifierToValetMap = WeakStorage<Valet>()

    private class func findOrCreate(_ address: ValetAddress) -> Valet {
        let store = ValetStore.chosen
        let key = ValetStore.identity(of: store) + "|" + address.service.cacheKey
        return identifierToValetMap.object(forKey: key) { Valet(Sandbox(address, store: store)) }
    }

    // MARK: Equality and description

    /// Valets are equal when their service strings are.
    public static func == (lhs: Valet, rhs: Valet) -> Bool { lhs.service == rhs.service }

    @available(*, unavailable)
    public override init() {
        fatalError("Use the class methods above to create usable Valet objects")
    }

    private init(_ sandbox: Sandbox) {
        self.sandbox = sandbox
        self.identifier = sandbox.identifier
        self.accessibility = sandbox.configuration.accessibility
        super.init()
    }

    public override var description: String {
        "\(super.description) \(identifier) \(configuration.prettyDescription)"
    }

    public override var hash: Int { service.description.hashValue }

    /// Agrees with `==` (and `hash`), for `Set`, `XCTAssertEqual` and `NSObject` equality.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? Valet else { return false }
        return self == other
    }

    /// When the Valet's items can be read.
    public let accessibility: Accessibility
    /// The Valet's identifier (for a shared group without one: `prefix.group`).
    public let identifier: Identifier

    let sandbox: Sandbox
    var service: Service { sandbox.service }
    var baseAttributes: Attributes { sandbox.baseAttributes }
    var configuration: Configuration { sandbox.configuration }

    // MARK: Access

    /// Whether the Valet can read and write now: writes (once) and reads back a canary item,
    /// which ``allKeys()`` never lists.
    public func canAccessKeychain() -> Bool { sandbox.canAccessKeychain() }

    /// Stores `object` for `key`, replacing any value, atomically.
    /// - Throws: ``KeychainError/emptyKey``, ``KeychainError/emptyValue``, or
    ///   ``KeychainError/couldNotAccessKeychain`` (locked vault, value over 1 MiB...).
    public func setObject(_ object: Data, forKey key: String) throws(KeychainError) {
        try sandbox.setObject(object, forKey: key)
    }

    /// The value stored for `key`.
    /// - Throws: ``KeychainError/itemNotFound`` if none, ``KeychainError/emptyKey``, or
    ///   ``KeychainError/couldNotAccessKeychain``.
    public func object(forKey key: String) throws(KeychainError) -> Data {
        try sandbox.object(forKey: key)
    }

    /// Whether a value is stored for `key`, without reading it.
    /// - Throws: ``KeychainError/couldNotAccessKeychain`` (also for an empty key, as Valet does).
    public func containsObject(forKey key: String) throws(KeychainError) -> Bool {
        try sandbox.containsObject(forKey: key)
    }

    /// Stores the UTF-8 bytes of `string` for `key`.
    /// - Throws: as ``setObject(_:forKey:)``.
    public func setString(_ string: String, forKey key: String) throws(KeychainError) {
        try sandbox.setString(string, forKey: key)
    }

    /// The value stored for `key`, as UTF-8 text.
    /// - Throws: ``KeychainError/itemNotFound`` if none or if the bytes are not UTF-8, as Valet does.
    public func string(forKey key: String) throws(KeychainError) -> String {
        try sandbox.string(forKey: key)
    }

    /// Every key stored in this Valet (never the canary). Values are not decrypted.
    public func allKeys() throws(KeychainError) -> Set<String> {
        try sandbox.allKeys()
    }

    /// Removes the value for `key`; removing an absent key succeeds.
    /// - Throws: ``KeychainError/emptyKey`` or ``KeychainError/couldNotAccessKeychain``.
    public func removeObject(forKey key: String) throws(KeychainError) {
        try sandbox.removeObject(forKey: key)
    }

    /// Removes every value of this Valet (the canary too), in one transaction.
    public func removeAllObjects() throws(KeychainError) {
        try sandbox.removeAllObjects()
    }
}
