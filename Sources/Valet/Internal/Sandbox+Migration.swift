import Foundation
import KeychainCore
import ValetNaming

// Valet's migration, once for every flavour: validate the query as Valet does, read the
// source, stage every pair, then write them in one transaction of the destination store.
extension Sandbox {
    func migrateObjects(
        matching query: [String: AnyHashable],
        compactMap: (MigratableKeyValuePair<AnyHashable>) throws -> MigratableKeyValuePair<String>?
    ) throws {
        try migrate(from: nil, query: Self.migrationQuery(query), removeOnCompletion: false, compactMap: compactMap)
    }

    func migrateObjects(matching query: [String: AnyHashable], removeOnCompletion: Bool) throws {
        let parsed = try Self.migrationQuery(query)
        _ = try allKeys()
        try migrate(from: nil, query: parsed, removeOnCompletion: removeOnCompletion, compactMap: Self.keepingStringKeys)
    }

    func migrateObjects(
        from source: Sandbox,
        compactMap: (MigratableKeyValuePair<AnyHashable>) throws -> MigratableKeyValuePair<String>?
    ) throws {
        try migrate(from: source, query: source.baseQuery, removeOnCompletion: false, compactMap: compactMap)
    }

    func migrateObjects(from source: Sandbox, removeOnCompletion: Bool) throws {
        _ = try allKeys()
        try migrate(from: source, query: source.baseQuery, removeOnCompletion: removeOnCompletion, compactMap: Self.keepingStringKeys)
    }

    /// The removeOnCompletion variants' transform: keys must be strings, values pass unchanged.
    private static func keepingStringKeys(_ pair: MigratableKeyValuePair<AnyHashable>) throws -> MigratableKeyValuePair<String>? {
        guard let key = pair.key as? String else { throw MigrationError.keyToMigrateInvalid }
        return MigratableKeyValuePair(key: key, value: pair.value)
    }

    var baseQuery: Query { Query(.genericPassword, attributes: baseAttributes, returnData: true) }

    func legacyQuery(accessible: String, description: String, fullOverrides: Bool) -> [String: AnyHashable] {
        var query: [String: AnyHashable] = [
            kSecClass: kSecClassGenericPassword, kSecAttrAccessible: accessible,
            kSecAttrService: service.legacyDescription(accessibility: description, fullOverrides: fullOverrides),
        ]
        if !baseAttributes.accessGroup!.isEmpty { query[kSecAttrAccessGroup] = baseAttributes.accessGroup! }
        if configuration.isSynchronizable { query[kSecAttrSynchronizable] = true }
        return query
    }

    /// Validates a keychain query as Valet does and translates it for the store.
    static func migrationQuery(_ query: [String: AnyHashable]) throws(MigrationError) -> Query {
        guard !query.isEmpty,
            query[kSecMatchLimit] != AnyHashable(kSecMatchLimitOne),
            query[kSecReturnData] != AnyHashable(true),
            query[kSecReturnAttributes] != AnyHashable(false),
            query[kSecReturnRef] != AnyHashable(true),
            query[kSecReturnPersistentRef] != AnyHashable(false),
            query[kSecClass] == AnyHashable(kSecClassGenericPassword),
            query[kSecAttrAccessControl] == nil
        else { throw .invalidQuery }
        var attributes = Attributes()
        attributes.service = query[kSecAttrService] as? String
        attributes.account = query[kSecAttrAccount] as? String
        attributes.accessGroup = query[kSecAttrAccessGroup] as? String
        attributes.label = query[kSecAttrLabel] as? String
        attributes.comment = query[kSecAttrComment] as? String
        attributes.description = query[kSecAttrDescription] as? String
        attributes.generic = query[kSecAttrGeneric] as? Data
        if let accessible = query[kSecAttrAccessible] as? String {
            guard let accessibility = KeychainCore.Accessibility(rawValue: accessible) else { throw .invalidQuery }
            attributes.accessibility = accessibility
        }
        // As on Apple: a query that does not name synchronizable matches only local items;
        // kSecAttrSynchronizableAny matches both.
        switch query[kSecAttrSynchronizable] {
        case nil: attributes.synchronizable = false
        case AnyHashable(kSecAttrSynchronizableAny): attributes.synchronizable = nil
        case let value: attributes.synchronizable = (value as? Bool) ?? ((value as? String) == "1")
        }
        return Query(.genericPassword, attributes: attributes, returnData: true)
    }

    /// The one migration path: read the source, stage every pair (validating as Valet does,
    /// before anything is written), then write them in one transaction.
    private func migrate(
        from source: Sandbox?, query: Query,
        removeOnCompletion: Bool,
        compactMap: (MigratableKeyValuePair<AnyHashable>) throws -> MigratableKeyValuePair<String>?
    ) throws {
        let destination = try keychainStore()
        let origin = try source?.keychainStore() ?? destination
        let items: [Item]
        do {
            items = try origin.copyMatching(query)
        } catch {
            throw KeychainError(error)
        }
        var staged: [(key: String, value: Data)] = []
        var stagedKeys = Set<String>()
        var originals: [Query] = []
        for item in items {
            guard let account = item.attributes.account, !account.isEmpty else { throw MigrationError.keyToMigrateInvalid }
            if account == Self.canaryKey { continue }
            guard let value = item.value, value.count > 0 else { throw MigrationError.dataToMigrateInvalid }
            originals.append(Query(identifying: item))
            guard let pair = try compactMap(MigratableKeyValuePair<AnyHashable>(key: account, value: value.data)) else { continue }
            guard !pair.key.isEmpty else { throw MigrationError.keyToMigrateInvalid }
            guard !stagedKeys.contains(pair.key) else { throw MigrationError.duplicateKeyToMigrate }
            guard !pair.value.isEmpty else { throw MigrationError.dataToMigrateInvalid }
            if try containsObject(forKey: pair.key) { throw MigrationError.keyToMigrateAlreadyExistsInValet }
            stagedKeys.insert(pair.key)
            staged.append((pair.key, pair.value))
        }
        let writes = staged.map { WriteOperation.upsert(item(forKey: $0.key, value: SecretBytes($0.value))) }
        let removals = removeOnCompletion ? originals.map { WriteOperation.delete($0) } : []
        if origin === destination {
            do { try destination.write(writes + removals) } catch { throw KeychainError(error) }
            return
        }
        do { try destination.write(writes) } catch { throw KeychainError(error) }
        guard !removals.isEmpty else { return }
        do {
            try origin.write(removals)
        } catch {
            // Put the destination back as it was, so nothing is duplicated or half-moved.
            _ = try? destination.write(staged.map { .delete(Query(.genericPassword, attributes: attributes(forKey: $0.key))) })
            throw MigrationError.removalFailed
        }
    }

    func keychainStore() throws(KeychainError) -> any Store {
        do { return try keychain() } catch { throw KeychainError(error) }
    }
}
