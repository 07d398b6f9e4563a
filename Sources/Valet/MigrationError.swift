/// Why a migration into a Valet failed.
public enum MigrationError: Int, CaseIterable, CustomStringConvertible, Error, Equatable, Sendable {
    /// The query cannot describe items to migrate.
    case invalidQuery
    /// A key to migrate is missing, empty, or not a string.
    case keyToMigrateInvalid
    /// A value to migrate is missing or empty.
    case dataToMigrateInvalid
    /// Two items to migrate have the same key.
    case duplicateKeyToMigrate
    /// The destination Valet already holds a key to migrate.
    case keyToMigrateAlreadyExistsInValet
    /// The migrated items could not be removed from their source.
    case removalFailed

    /// `"MigrationError.<case>"`.
    public var description: String {
        switch self {
        case .invalidQuery: "MigrationError.invalidQuery"
        case .keyToMigrateInvalid: "MigrationError.keyToMigrateInvalid"
        case .dataToMigrateInvalid: "MigrationError.dataToMigrateInvalid"
        case .duplicateKeyToMigrate: "MigrationError.duplicateKeyToMigrate"
        case .keyToMigrateAlreadyExistsInValet: "MigrationError.keyToMigrateAlreadyExistsInValet"
        case .removalFailed: "MigrationError.removalFailed"
        }
    }
}
