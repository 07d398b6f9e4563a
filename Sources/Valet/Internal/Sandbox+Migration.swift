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

    func legacyQuery(accessible: CFString, description: String, fullOverrides: Bool) -> [String: AnyHashable] {
        var query: [String: AnyHashable] = [
            kSecClass as String: kSecClassGenericPassword as String, kSecAttrAccessible as String: accessible as String,
            kSecAttrService as String: service.legacyDescription(accessibility: description, fullOverrides: fullOverrides),
        ]
        if !baseAttributes.accessGroup!.isEmpty { query[kSecAttrAccessGroup as String] = baseAttributes.accessGroup! }
        if configuration.isSynchronizable { query[kSecAttrSynchronizable as String] = true }
        return query
    }

    /// Validates a keychain query as Valet does, then reads it as SecItemCopyMatching does.
    static func migrationQuery(_ query: [String: AnyHashable]) throws(MigrationError) -> Query {
        func text(_ key: CFString) -> String? { query[key as String] as? String }
        func flag(_ key: CFString) -> Bool? { query[key as String] as? Bool }
        guard !query.isEmpty,
            text(kSecMatchLimit) != kSecMatchLimitOne as String,
            flag(kSecReturnData) != true, flag(kSecReturnAttributes) != false,
            flag(kSecReturnRef) != true, flag(kSecReturnPersistentRef) != false,
            text(kSecClass) == kSecClassGenericPassword as String,
            query[kSecAttrAccessControl as String] == nil,
            var translated = SecItemStoreQuery.search(query as NSDictionary)
        else { throw .invalidQuery }
        translated.limit = .all
        translated.returnData = true
        translated.returnAttributes = true
        return translated
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
