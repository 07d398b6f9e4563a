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
    static let readClassKeys = "SELECT protection, wrapped FROM class_keys"
    static let insertClassKey = "INSERT INTO class_keys(protection, wrapped) VALUES(?, ?)"
    static let deleteClassKey = "DELETE FROM class_keys WHERE protection = ?"

    static let itemColumns = "id, class, protection, identity, attributes, value"
    static let selectByIdentity = "SELECT \(itemColumns) FROM items WHERE identity = ?"
    static let selectByScope = "SELECT \(itemColumns) FROM items WHERE scope = ? AND class = ?"
    static let selectByClass = "SELECT \(itemColumns) FROM items WHERE class = ?"
    static let selectValue = "SELECT value FROM items WHERE id = ?"
    static let insertItem = "INSERT INTO items(class, protection, identity, scope, attributes, value) VALUES(?, ?, ?, ?, ?, ?)"
    static let replaceItem = "UPDATE items SET protection = ?, identity = ?, scope = ?, attributes = ?, value = ? WHERE id = ?"
    static let deleteItem = "DELETE FROM items WHERE id = ?"
    static let deleteProtection = "DELETE FROM items WHERE protection = ?"
    static let countItems = "SELECT count(*) FROM items"
}
