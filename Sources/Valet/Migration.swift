import Foundation
import KeychainCore
import ValetNaming

extension Valet {
    // MARK: Migration

    /// Moves the items matching `query` into this Valet, transforming each key and value with
    /// `compactMap` (return nil to skip an item, throw to abort).
    ///
    /// Unlike Valet on Apple platforms, the writes are one transaction of the destination store:
    /// all of them happen or none, even if the process dies mid-way.
    /// - Throws: ``MigrationError`` where the query or an item cannot be migrated (`invalidQuery`,
    ///   `keyToMigrateInvalid`, `dataToMigrateInvalid`, `duplicateKeyToMigrate`,
    ///   `keyToMigrateAlreadyExistsInValet`), ``KeychainError/itemNotFound`` when nothing matches,
    ///   another ``KeychainError`` when a store fails, or the error `compactMap` threw, unchanged.
    public func migrateObjects(
        matching query: [String: AnyHashable],
        compactMap: (MigratableKeyValuePair<AnyHashable>) throws -> MigratableKeyValuePair<String>?
    ) throws {
        try sandbox.migrateObjects(matching: query, compactMap: compactMap)
    }

    /// Moves the items matching `query` into this Valet, keeping keys and values; with
    /// `removeOnCompletion`, removes them from where they were.
    /// - Throws: as ``migrateObjects(matching:compactMap:)``, and ``MigrationError/removalFailed``
    ///   when the originals could not be removed (the migration is then undone).
    public func migrateObjects(matching query: [String: AnyHashable], removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(matching: query, removeOnCompletion: removeOnCompletion)
    }

    /// Moves every item of `valet` (which may use another store) into this Valet, transformed by `compactMap`.
    public func migrateObjects(
        from valet: Valet,
        compactMap: (MigratableKeyValuePair<AnyHashable>) throws -> MigratableKeyValuePair<String>?
    ) throws {
        try sandbox.migrateObjects(from: valet.sandbox, compactMap: compactMap)
    }

    /// Moves every item of `valet` (which may use another store) into this Valet.
    public func migrateObjects(from valet: Valet, removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(from: valet.sandbox, removeOnCompletion: removeOnCompletion)
    }

    /// Moves the items a Valet with this configuration stored under the removed `always`
    /// accessibility into this Valet.
    public func migrateObjectsFromAlwaysAccessibleValet(removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(
            matching: sandbox.legacyQuery(accessible: kSecAttrAccessibleAlways, description: "AccessibleAlways", fullOverrides: false),
            removeOnCompletion: removeOnCompletion)
    }

    /// Moves the items a Valet with this configuration stored under the removed
    /// `alwaysThisDeviceOnly` accessibility into this Valet.
    public func migrateObjectsFromAlwaysAccessibleThisDeviceOnlyValet(removeOnCompletion: Bool) throws {
        try sandbox.migrateObjects(
            matching: sandbox.legacyQuery(accessible: kSecAttrAccessibleAlwaysThisDeviceOnly, description: "AccessibleAlwaysThisDeviceOnly", fullOverrides: true),
            removeOnCompletion: removeOnCompletion)
    }
}
