import Foundation
import KeychainCore
internal import KeychainSystem
import ValetNaming

/// Valet 2's `VALValet`, as Swift imports it from Valet 2.4.2's header: code written for it
/// (`VALValet(identifier: "Druidia", accessibility: .whenUnlocked)`, `setString(_:forKey:)`
/// returning `Bool`, `string(forKey:)` returning nil when absent) compiles unchanged.
///
/// It reads and writes the very items a Valet 5 ``Valet`` with the same identifier and
/// accessibility does: Valet 5 kept Valet 2's service strings, and both run on one sandbox.
///
/// Differences, by necessity: a shared-access-group valet needs an application-identifier
/// prefix, which Linux has no entitlement for; it is `KEYCHAIN_APP_ID_PREFIX`, else `group`
/// (as Valet 5's `SharedGroupIdentifier(groupPrefix: "group", ...)`). The retired `always`
/// accessibilities give nil.
open class VALValet: NSObject, NSCopying, @unchecked Sendable {
    let sandbox: Sandbox

    /// The identifier, or the shared access group identifier, the valet was made with.
    public let identifier: String
    /// Whether the valet was made with a shared access group identifier.
    public let isSharedAcrossApplications: Bool
    /// When the valet's items can be read.
    public let accessibility: VALAccessibility

    /// A valet for `identifier`; nil when the identifier is empty or the accessibility retired.
    public init?(identifier: String, accessibility: VALAccessibility) {
        guard let address = Self.address(identifier: identifier, shared: false, accessibility: accessibility) else { return nil }
        sandbox = Sandbox(address, store: ValetStore.chosen)
        self.identifier = identifier
        isSharedAcrossApplications = false
        self.accessibility = accessibility
        super.init()
    }

    /// A valet whose items every program of the user naming the same group can read; nil
    /// when the identifier is empty or the accessibility retired.
    public init?(sharedAccessGroupIdentifier: String, accessibility: VALAccessibility) {
        guard let address = Self.address(identifier: sharedAccessGroupIdentifier, shared: true, accessibility: accessibility) else { return nil }
        sandbox = Sandbox(address, store: ValetStore.chosen)
        identifier = sharedAccessGroupIdentifier
        isSharedAcrossApplications = true
        self.accessibility = accessibility
        super.init()
    }

    /// For the Secure Enclave valets, whose addresses come from an access control.
    init(address: ValetAddress, identifier: String, shared: Bool, accessibility: VALAccessibility) {
        sandbox = Sandbox(address, store: ValetStore.chosen)
        self.identifier = identifier
        isSharedAcrossApplications = shared
        self.accessibility = accessibility
        super.init()
    }

    /// The address of this flavour of valet (subclasses choose theirs); nil when invalid.
    class func address(identifier: String, shared: Bool, accessibility: VALAccessibility) -> ValetAddress? {
        guard let modern = accessibility.modern else { return nil }
        if shared {
            guard let group = sharedGroup(identifier) else { return nil }
            return .sharedGroupValet(with: group, identifier: nil, accessibility: modern)
        }
        guard let identifier = Identifier(nonEmpty: identifier) else { return nil }
        return .valet(with: identifier, accessibility: modern)
    }

    /// A Valet 2 shared access group, with the prefix Linux stands in for the team identifier.
    static func sharedGroup(_ group: String) -> SharedGroupIdentifier? {
        let prefix = ProcessEnvironment.value("KEYCHAIN_APP_ID_PREFIX").flatMap { $0.isEmpty ? nil : $0 }
        if let prefix { return SharedGroupIdentifier(appIDPrefix: prefix, nonEmptyGroup: group) }
        return SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: group)
    }

    // MARK: NSObject

    /// Valets are the same when their service strings (and access groups) are.
    public func isEqual(to otherValet: VALValet) -> Bool {
        sandbox.service == otherValet.sandbox.service
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? VALValet else { return false }
        return isEqual(to: other)
    }

    open override var hash: Int { sandbox.service.description.hashValue }

    open override var description: String {
        "\(super.description) \(identifier) \(sandbox.configuration.prettyDescription)"
    }

    /// Valets are immutable: a copy is the valet itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    // MARK: Access (Bool and nil for failures, as Valet 2)

    /// Whether the valet can read and write now.
    open func canAccessKeychain() -> Bool { sandbox.canAccessKeychain() }

    /// Stores `value` for `key`; false when it could not (an empty key or value, a locked vault).
    @discardableResult
    open func setObject(_ value: Data, forKey key: String) -> Bool {
        (try? sandbox.setObject(value, forKey: key)) != nil
    }

    /// The value for `key`; nil when there is none or it cannot be read.
    open func object(forKey key: String) -> Data? { try? sandbox.object(forKey: key) }

    /// Stores `string` for `key`; false when it could not.
    @discardableResult
    open func setString(_ string: String, forKey key: String) -> Bool {
        (try? sandbox.setString(string, forKey: key)) != nil
    }

    /// The text for `key`; nil when there is none or it cannot be read.
    open func string(forKey key: String) -> String? { try? sandbox.string(forKey: key) }

    /// Whether a value is stored for `key`.
    open func containsObject(forKey key: String) -> Bool { (try? sandbox.containsObject(forKey: key)) ?? false }

    /// Every key of the valet (empty when they cannot be read).
    open func allKeys() -> Set<AnyHashable> { Set((try? sandbox.allKeys()) ?? []) }

    /// Removes the value for `key`; false when it could not (removing a missing key succeeds).
    @discardableResult
    open func removeObject(forKey key: String) -> Bool { (try? sandbox.removeObject(forKey: key)) != nil }

    /// Removes every value of the valet; false when it could not.
    @discardableResult
    open func removeAllObjects() -> Bool { (try? sandbox.removeAllObjects()) != nil }

    // MARK: Migration (an NSError in VALMigrationErrorDomain, nil on success)

    /// Moves the items a Security-framework query matches into this valet, all or nothing.
    /// - Returns: nil on success, else an `NSError` in ``VALMigrationErrorDomain`` whose code is a ``VALMigrationError``.
    open func migrateObjects(matchingQuery secItemQuery: [AnyHashable: Any], removeOnCompletion remove: Bool) -> Error? {
        var query: [String: AnyHashable] = [:]
        for (key, value) in secItemQuery {
            guard let name = key.base as? String, let hashable = value as? AnyHashable else { return Self.migrationError(.invalidQuery) }
            query[name] = hashable
        }
        return Self.migrationError { try sandbox.migrateObjects(matching: query, removeOnCompletion: remove) }
    }

    /// Moves the items of another valet into this one, all or nothing.
    /// - Returns: nil on success, else an `NSError` in ``VALMigrationErrorDomain``.
    open func migrateObjects(from valet: VALValet, removeOnCompletion remove: Bool) -> Error? {
        Self.migrationError { try sandbox.migrateObjects(from: valet.sandbox, removeOnCompletion: remove) }
    }

    private static func migrationError(_ body: () throws -> Void) -> Error? {
        do {
            try body()
            return nil
        } catch let error as MigrationError {
            switch error {
            case .invalidQuery: return migrationError(.invalidQuery)
            case .keyToMigrateInvalid: return migrationError(.keyInQueryResultInvalid)
            case .dataToMigrateInvalid: return migrationError(.dataInQueryResultInvalid)
            case .duplicateKeyToMigrate: return migrationError(.duplicateKeyInQueryResult)
            case .keyToMigrateAlreadyExistsInValet: return migrationError(.keyInQueryResultAlreadyExistsInValet)
            case .removalFailed: return migrationError(.removalFailed)
            }
        } catch KeychainError.itemNotFound {
            return migrationError(.noItemsToMigrateFound)
        } catch {
            return migrationError(.couldNotReadKeychain)
        }
    }

    private static func migrationError(_ code: VALMigrationError) -> NSError {
        NSError(domain: VALMigrationErrorDomain, code: Int(code.rawValue))
    }
}

/// Valet 2's `VALSynchronizableValet`: items marked synchronizable (the iCloud flavour), kept
/// apart from local items exactly as Valet 5's iCloud valets keep them.
open class VALSynchronizableValet: VALValet, @unchecked Sendable {
    /// Whether synchronizable items can be stored here: always, on the vault.
    open class func supportsSynchronizableKeychainItems() -> Bool { true }

    override class func address(identifier: String, shared: Bool, accessibility: VALAccessibility) -> ValetAddress? {
        // Valet 2 refused ThisDeviceOnly (and passcode) classes for synchronizable items.
        let cloud: CloudAccessibility
        switch accessibility {
        case .whenUnlocked: cloud = .whenUnlocked
        case .afterFirstUnlock: cloud = .afterFirstUnlock
        default: return nil
        }
        if shared {
            guard let group = sharedGroup(identifier) else { return nil }
            return .iCloudSharedGroupValet(with: group, identifier: nil, accessibility: cloud)
        }
        guard let identifier = Identifier(nonEmpty: identifier) else { return nil }
        return .iCloudValet(with: identifier, accessibility: cloud)
    }
}
