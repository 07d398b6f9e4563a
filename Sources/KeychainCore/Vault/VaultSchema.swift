/// The vault's tables. Only digests, codes and ciphertext are stored: no service, account,
/// label or value in clear.
enum VaultSchema {
    static let create = """
        CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS class_keys(protection INTEGER PRIMARY KEY, wrapped BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS items(
            id INTEGER PRIMARY KEY,
            class INTEGER NOT NULL,
            protection INTEGER NOT NULL,
            identity BLOB NOT NULL UNIQUE,
            scope BLOB NOT NULL,
            attributes BLOB NOT NULL,
            value BLOB NOT NULL
        );
        CREATE INDEX IF NOT EXISTS items_scope ON items(scope);
        """

    static let readHeader = "SELECT value FROM meta WHERE name = 'header'"
    static let writeHeader = "INSERT OR REPLACE INTO meta(name, value) VALUES('header', ?)"
    static let readMachineCheck = "SELECT value FROM meta WHERE name = 'machine'"
    static let writeMachineCheck = "INSERT OR REPLACE INTO meta(name, value) VALUES('machine', ?)"
    static let readPresenceKey = "SELECT value FROM meta WHERE name = 'presence'"
    static let writePresenceKey = "INSERT OR REPLACE INTO meta(name, value) VALUES('presence', ?)"
    static let deletePresenceKey = "DELETE FROM meta WHERE name = 'presence'"
    static let readClassKeys = "SELECT protection, wrapped FROM class_keys"
    static let insertClassKey = "INSERT INTO class_keys(protection, wrapped) VALUES(?, ?)"
    static let deleteClassKey = "DELETE FROM class_keys WHERE protection = ?"

    static let itemColumns = "id, class, protection, identity, attributes, value"
    static let selectByIdentity = "SELECT \(itemColumns) FROM items WHERE identity = ?"

    /// How candidates are found: by the identity digest, the scope digest, or the class alone.
    enum Lookup: CaseIterable { case identity, scope, itemClass }

    /// The candidate query for a lookup path, with or without the value column (a NULL stands
    /// in, so large values are not read when only attributes are wanted) and the protection filter.
    /// Built once: the statement cache is keyed by this text.
    static func select(_ lookup: Lookup, includeValue: Bool, byProtection: Bool) -> String {
        selects[lookup]![includeValue ? 1 : 0][byProtection ? 1 : 0]
    }

    private static let selects: [Lookup: [[String]]] = Dictionary(uniqueKeysWithValues: Lookup.allCases.map { lookup in
        let filter: String
        switch lookup {
        case .identity: filter = "identity = ? AND class = ?"
        case .scope: filter = "scope = ? AND class = ?"
        case .itemClass: filter = "class = ?"
        }
        return (lookup, [false, true].map { value in
            [false, true].map { protection in
                "SELECT id, class, protection, identity, attributes, \(value ? "value" : "NULL") FROM items WHERE \(filter)"
                    + (protection ? " AND (protection & 15) = ?" : "") + " ORDER BY id"
            }
        })
    })
    static let selectValue = "SELECT value FROM items WHERE id = ?"
    static let insertItem = "INSERT INTO items(class, protection, identity, scope, attributes, value) VALUES(?, ?, ?, ?, ?, ?)"
    static let replaceItem = "UPDATE items SET protection = ?, identity = ?, scope = ?, attributes = ?, value = ? WHERE id = ?"
    static let deleteItem = "DELETE FROM items WHERE id = ?"
    static let deleteProtection = "DELETE FROM items WHERE (protection & 15) = ?"
    /// Items under an access control (a non-zero high nibble of the protection code).
    static let deletePresenceItems = "DELETE FROM items WHERE protection >= 16"
    static let countItems = "SELECT count(*) FROM items"
}
