/// The vault's tables. Only digests, codes and ciphertext are stored: no service, account,
/// label or value in clear.
enum VaultSchema {
    /// The schema of each format, statement by statement, exactly as SQLite keeps it in
    /// `sqlite_master`: what a vault's schema must be, to the byte (``check(_:path:)``). Format 2
    /// adds each row's generation (``ItemLedger``); format 3 keeps format 2's tables (its
    /// sharded ledger lives in `meta`), so its schema is format 2's.
    static func objects(format: Int) -> [(type: String, name: String, table: String, sql: String?)] {
        format >= 2 ? formatTwo : formatOne
    }

    private static let formatOne = common(
        itemsTable: """
            CREATE TABLE items(
                id INTEGER PRIMARY KEY,
                class INTEGER NOT NULL,
                protection INTEGER NOT NULL,
                identity BLOB NOT NULL UNIQUE,
                scope BLOB NOT NULL,
                attributes BLOB NOT NULL,
                value BLOB NOT NULL
            )
            """)

    private static let formatTwo = common(
        itemsTable: """
            CREATE TABLE items(
                id INTEGER PRIMARY KEY,
                class INTEGER NOT NULL,
                protection INTEGER NOT NULL,
                identity BLOB NOT NULL UNIQUE,
                scope BLOB NOT NULL,
                attributes BLOB NOT NULL,
                value BLOB NOT NULL,
                generation INTEGER NOT NULL
            )
            """)

    private static func common(itemsTable: String) -> [(type: String, name: String, table: String, sql: String?)] {
        [
            ("table", "meta", "meta", "CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID"),
            ("table", "class_keys", "class_keys", "CREATE TABLE class_keys(protection INTEGER PRIMARY KEY, wrapped BLOB NOT NULL)"),
            ("table", "items", "items", itemsTable),
            ("index", "sqlite_autoindex_items_1", "items", nil),
            ("index", "items_scope", "items", "CREATE INDEX items_scope ON items(scope)"),
        ]
    }

    /// What a vault enrolled in sync adds: its journal, one row per synchronizable item it has
    /// written or received (the item's clock and origin, sealed), `pending` while etcd has not
    /// taken it: the outbox. Meta rows `sync` (the group's keys and the pull cursor, sealed) and
    /// `sync_device` (this device's id) go with it.
    static let syncObjects: [(type: String, name: String, table: String, sql: String?)] = [
        ("table", "sync_journal", "sync_journal", "CREATE TABLE sync_journal(identity BLOB PRIMARY KEY, pending INTEGER NOT NULL, record BLOB NOT NULL) WITHOUT ROWID"),
        ("index", "sync_journal_pending", "sync_journal", "CREATE INDEX sync_journal_pending ON sync_journal(pending)"),
    ]
    static let createSync = syncObjects.compactMap(\.sql).joined(separator: ";\n")
    static let dropSync = "DROP TABLE sync_journal; DELETE FROM meta WHERE name IN ('sync', 'sync_device')"
    static let readJournal = "SELECT pending, record FROM sync_journal WHERE identity = ?"
    static let writeJournal = "INSERT OR REPLACE INTO sync_journal(identity, pending, record) VALUES(?, ?, ?)"
    static let readAllPendingJournal = "SELECT identity, record FROM sync_journal WHERE pending = 1"
    static let countPendingJournal = "SELECT count(*) FROM sync_journal WHERE pending = 1"
    static let countJournal = "SELECT count(*) FROM sync_journal"
    static let readAllJournal = "SELECT identity, pending, record FROM sync_journal"
    static let clearPending = "UPDATE sync_journal SET pending = 0 WHERE identity = ? AND record = ? AND pending = 1"
    static let markAllPending = "UPDATE sync_journal SET pending = 1"
    static let readSyncState = "SELECT value FROM meta WHERE name = 'sync'"
    static let writeSyncState = "INSERT OR REPLACE INTO meta(name, value) VALUES('sync', ?)"
    static let readSyncDevice = "SELECT value FROM meta WHERE name = 'sync_device'"
    static let writeSyncDevice = "INSERT OR REPLACE INTO meta(name, value) VALUES('sync_device', ?)"

    /// The item table and its index, as a new vault (or an upgrade) creates them.
    static let createItems = formatTwo.dropFirst(2).compactMap(\.sql).joined(separator: ";\n")

    static let create = formatTwo.compactMap(\.sql).joined(separator: ";\n")

    /// Refuses a database whose schema is not exactly a vault's: no tables at all (an empty or
    /// truncated file), another database, or a vault with anything added or changed (a
    /// trigger that silently ignores updates or copies every new ciphertext away, a view in a
    /// table's place, an extra table or index, a changed column).
    /// - Returns: the format whose schema it is (1 or 2), and whether the vault is enrolled in
    ///   sync (format 2 with exactly ``syncObjects`` added).
    @discardableResult
    static func check(_ connection: Connection, path: String) throws(StoreError) -> (format: Int, synced: Bool) {
        var found: [(type: String, name: String, table: String, sql: String?)] = []
        do throws(SQLiteError) {
            try connection.statement("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    found.append((s.text(0), s.text(1), s.text(2), s.isNull(3) ? nil : s.text(3)))
                    if found.count > 64 { return }
                }
            }
        } catch {
            throw VaultState.map(error, path: path)
        }
        guard !found.isEmpty else {
            throw .corrupted("\(path) is not a keychain vault: it has no tables (an empty or truncated file)")
        }
        guard found.contains(where: { $0.type == "table" && $0.name == "meta" }) else {
            throw .corrupted("\(path) is an SQLite database but not a keychain vault")
        }
        let described = found.map { "\($0.type) \($0.name) \($0.table) \($0.sql ?? "")" }
        let items = found.first { $0.type == "table" && $0.name == "items" }?.sql ?? ""
        let format = holds(items, "generation INTEGER") ? 2 : 1
        let synced = format >= 2 && found.contains { $0.type == "table" && $0.name == "sync_journal" }
        let objects = objects(format: format) + (synced ? syncObjects : [])
        let expected = Set(objects.map { "\($0.type) \($0.name) \($0.table) \($0.sql ?? "")" })
        for (object, description) in zip(found, described) where !expected.contains(description) {
            throw .tampered("\(path) has a \(object.type) '\(object.name)' that is not part of a vault's schema (or a changed one); refusing to use it")
        }
        guard found.count == objects.count else {
            throw .tampered("\(path) lacks part of a vault's schema; refusing to use it")
        }
        return (format, synced)
    }

    static let readHeader = "SELECT value FROM meta WHERE name = 'header'"
    static let writeHeader = "INSERT OR REPLACE INTO meta(name, value) VALUES('header', ?)"
    static let readMachineCheck = "SELECT value FROM meta WHERE name = 'machine'"
    static let writeMachineCheck = "INSERT OR REPLACE INTO meta(name, value) VALUES('machine', ?)"
    static let readKeyCheck = "SELECT value FROM meta WHERE name = 'keycheck'"
    static let writeKeyCheck = "INSERT OR REPLACE INTO meta(name, value) VALUES('keycheck', ?)"
    static let readPresenceKey = "SELECT value FROM meta WHERE name = 'presence'"
    static let writePresenceKey = "INSERT OR REPLACE INTO meta(name, value) VALUES('presence', ?)"
    static let deletePresenceKey = "DELETE FROM meta WHERE name = 'presence'"
    static let readClassKeys = "SELECT protection, wrapped FROM class_keys"
    static let insertClassKey = "INSERT INTO class_keys(protection, wrapped) VALUES(?, ?)"
    static let deleteClassKey = "DELETE FROM class_keys WHERE protection = ?"

    /// The item columns every read takes; a format-1 table has no generation, and its rows read
    /// as generation 0 (sealed the format-1 way).
    static func itemColumns(format: Int, includeValue: Bool = true) -> String {
        "id, class, protection, identity, attributes, \(includeValue ? "value" : "NULL"), \(format >= 2 ? "generation" : "0"), scope"
    }
    static func selectByIdentity(format: Int) -> String { format >= 2 ? selectByIdentityTwo : selectByIdentityOne }
    static func selectAllItems(format: Int) -> String { format >= 2 ? selectAllTwo : selectAllOne }
    private static let selectByIdentityOne = "SELECT \(itemColumns(format: 1)) FROM items WHERE identity = ?"
    private static let selectByIdentityTwo = "SELECT \(itemColumns(format: 2)) FROM items WHERE identity = ?"
    private static let selectAllOne = "SELECT \(itemColumns(format: 1)) FROM items ORDER BY id"
    private static let selectAllTwo = "SELECT \(itemColumns(format: 2)) FROM items ORDER BY id"
    /// The rows an upgrade from format 1 carried over without re-sealing them (generation 0).
    static let selectCarriedItems = "SELECT \(itemColumns(format: 2)) FROM items WHERE generation = 0 ORDER BY id"
    /// What the ledger covers, for every row.
    static let selectLedgerRows = "SELECT id, class, identity, generation FROM items"
    /// The same with each row's scope digest and protection, for a pass that also counts a
    /// lookup's rows (``ScopeCount``).
    static let selectLedgerRowsWithScope = "SELECT id, class, identity, generation, scope, protection FROM items"
    /// The same, for one item shard's range of the identity index (``LedgerShards``): the
    /// first range is open below and the last above, so that each row lies in one. Slots, as a
    /// process's first read runs one of them.
    static let selectFirstShardRows = StatementSlot(selectLedgerRows + " WHERE identity < ?")
    static let selectShardRows = StatementSlot(selectLedgerRows + " WHERE identity >= ? AND identity < ?")
    static let selectLastShardRows = StatementSlot(selectLedgerRows + " WHERE identity >= ?")
    /// The rows of one format-4 scope shard's range of the scope index, with their scope
    /// digests and protection (``VaultState/verifyScopeShard(_:counting:)``): read through that
    /// index, which the shard's tally holds to the ledger.
    static let selectFirstScopeShardRows = StatementSlot(selectScopeShardRowsBase + " WHERE scope < ?")
    static let selectScopeShardRows = StatementSlot(selectScopeShardRowsBase + " WHERE scope >= ? AND scope < ?")
    static let selectLastScopeShardRows = StatementSlot(selectScopeShardRowsBase + " WHERE scope >= ?")
    private static let selectScopeShardRowsBase = "SELECT id, class, identity, generation, scope, protection FROM items INDEXED BY items_scope"
    /// A `meta` value by its name: format 2's ledger or format 3's root (`ledger`,
    /// ``LedgerRoot``), and format 3's records of groups of shards (`ledger/NN`,
    /// ``LedgerShards/recordName(ofGroup:)``). A slot, as every process's first read runs it.
    static let readMeta = StatementSlot("SELECT value FROM meta WHERE name = ?")
    /// A `meta` value written by its name: the ledger or root, a group record.
    static let writeMeta = "INSERT OR REPLACE INTO meta(name, value) VALUES(?, ?)"
    /// The `meta` name of format 2's ledger and format 3's root.
    static let ledgerName = "ledger"
    /// The `meta` row that says the table holds no carried-over row (generation 0), written
    /// when the vault is made or upgraded to format 4 and when the last such row is re-sealed:
    /// an unlock then need not look for them (``VaultState/resealCarriedRows(passphraseKey:)``),
    /// which reads every row, there being no index on the generation. It vouches for nothing:
    /// a carried-over row is refused by every read whatever it says.
    static let noCarriedRowsName = "carried/none"
    /// Whether any row is carried over, found without reading more than the first.
    static let anyCarriedItem = "SELECT 1 FROM items WHERE generation = 0 LIMIT 1"
    /// Format 3's records of groups of shards, every one (``LedgerShards/recordName(ofGroup:)``).
    static let readGroupRecords = "SELECT name, value FROM meta WHERE name >= 'ledger/' AND name < 'ledger0'"

    /// How candidates are found: by the identity digest, the scope digest, or the class alone.
    enum Lookup: CaseIterable { case identity, scope, itemClass }

    /// The candidate query for a lookup path, with or without the value column (a NULL stands
    /// in, so large values are not read when only attributes are wanted) and the protection filter.
    /// Built once, each in its own statement slot.
    static func select(_ lookup: Lookup, includeValue: Bool, byProtection: Bool, format: Int) -> StatementSlot {
        selects[selectIndex(lookup, format: format >= 2 ? 2 : 1, includeValue: includeValue, byProtection: byProtection)]
    }

    private static func selectIndex(_ lookup: Lookup, format: Int, includeValue: Bool, byProtection: Bool) -> Int {
        let path: Int
        switch lookup {
        case .identity: path = 0
        case .scope: path = 1
        case .itemClass: path = 2
        }
        return path * 8 + (format - 1) * 4 + (includeValue ? 2 : 0) + (byProtection ? 1 : 0)
    }

    // One flat table, indexed arithmetically: every read takes its text from here, and a
    // command builds it once at start-up (interpolating each of the 24 texts cost ~18,000
    // instructions apiece).
    private static let selects: [StatementSlot] = {
        var table = [String](repeating: "", count: 24)
        for lookup in Lookup.allCases {
            let filter: String
            switch lookup {
            case .identity: filter = " FROM items WHERE identity = ? AND class = ?"
            case .scope: filter = " FROM items WHERE scope = ? AND class = ?"
            case .itemClass: filter = " FROM items WHERE class = ?"
            }
            for format in [1, 2] {
                for value in [false, true] {
                    let head = "SELECT " + itemColumns(format: format, includeValue: value) + filter
                    for protection in [false, true] {
                        table[selectIndex(lookup, format: format, includeValue: value, byProtection: protection)] =
                            head + (protection ? " AND (protection & 15) = ? ORDER BY id" : " ORDER BY id")
                    }
                }
            }
        }
        return table.map(StatementSlot.init)
    }()
    /// The rows under a scope digest and class (and protection code), counted without the
    /// scope index: what a read through that index must have returned (``VaultState/confirmScopeIndex(returned:values:byProtection:counted:)``).
    static let countScope = StatementSlot("SELECT count(*) FROM items NOT INDEXED WHERE scope = ? AND class = ?")
    static let countScopeByProtection = StatementSlot("SELECT count(*) FROM items NOT INDEXED WHERE scope = ? AND class = ? AND (protection & 15) = ?")
    static let selectValue = "SELECT value FROM items WHERE id = ?"
    static let insertItem = "INSERT INTO items(class, protection, identity, scope, attributes, value, generation) VALUES(?, ?, ?, ?, ?, ?, ?)"
    /// Keeps the row id: an upgrade carries rows over as they were numbered.
    static let insertItemWithID = "INSERT INTO items(id, class, protection, identity, scope, attributes, value, generation) VALUES(?, ?, ?, ?, ?, ?, ?, ?)"
    static let replaceItem = "UPDATE items SET protection = ?, identity = ?, scope = ?, attributes = ?, value = ?, generation = ? WHERE id = ?"
    /// The same, for a row whose digests stay: SQLite rewrites an index whenever its column is
    /// assigned, even to the same value, and each rewritten page is one more in the WAL's fsync.
    static let replaceItemKeepingDigests = "UPDATE items SET protection = ?, attributes = ?, value = ?, generation = ? WHERE id = ?"
    static let deleteItem = "DELETE FROM items WHERE id = ?"
    /// The items removing the passphrase destroys: of the passcode class (the parameter), or
    /// under an access control (a non-zero high nibble of the protection code).
    static func selectPasscodeBound(format: Int) -> String {
        "SELECT \(itemColumns(format: format)) FROM items WHERE (protection & 15) = ? OR protection >= 16 ORDER BY id"
    }
    static let countItems = "SELECT count(*) FROM items"

    /// Whether SQL text holds `part`, byte for byte: SQL as SQLite keeps it is compared as bytes,
    /// and `String.contains` would bring in `_StringProcessing`'s searcher, whose first use costs
    /// every `keychain` command a fifth of a million instructions.
    private static func holds(_ sql: String, _ part: String) -> Bool {
        let text = Array(sql.utf8), part = Array(part.utf8)
        guard !part.isEmpty, part.count <= text.count else { return part.isEmpty }
        return (0...text.count - part.count).contains { start in text[start..<start + part.count].elementsEqual(part) }
    }
}
