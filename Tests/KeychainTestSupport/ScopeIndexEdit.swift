import CSQLite

/// Rebuilds a vault's `items_scope` index as someone who can write the file (and has no keys)
/// could: the index's SQL is changed through `PRAGMA writable_schema`, the index rebuilt with
/// `REINDEX`, and the original SQL put back, so that the schema reads as a vault's and
/// `PRAGMA quick_check` still says ok, while the index no longer lists what the table holds.
public enum ScopeIndexEdit: String, CaseIterable, Sendable {
    /// Without one row (a partial index).
    case partial
    /// Filled with the rows' identity digests instead of their scope digests.
    case identityDigests
    /// Two rows of different scopes swapped: each listed under the other's scope, counts unchanged.
    case swapped
    /// One row listed under another row's scope, not its own.
    case pointingElsewhere

    private static let original = "CREATE INDEX items_scope ON items(scope)"

    /// Applies the edit to the vault at `path`; `row` and `other` are two rows in different
    /// scopes (`row` is the one left out, swapped or moved).
    public func apply(to path: String, row: Int64, other: Int64) throws {
        let scopes = try Self.query(path, "SELECT id, hex(scope) FROM items")
        guard let mine = scopes[row], let theirs = scopes[other] else { throw RawSQLiteError(message: "no rows \(row) and \(other)") }
        let edited: String
        switch self {
        case .partial: edited = "CREATE INDEX items_scope ON items(scope) WHERE id <> \(row)"
        case .identityDigests: edited = "CREATE INDEX items_scope ON items(identity)"
        case .swapped: edited = "CREATE INDEX items_scope ON items(CASE id WHEN \(row) THEN x'\(theirs)' WHEN \(other) THEN x'\(mine)' ELSE scope END)"
        case .pointingElsewhere: edited = "CREATE INDEX items_scope ON items(CASE id WHEN \(row) THEN x'\(theirs)' ELSE scope END)"
        }
        try Self.execute(path, "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = '\(edited.replacingQuote())' WHERE name = 'items_scope'")
        try Self.execute(path, "REINDEX items_scope")
        try Self.execute(path, "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = '\(Self.original)' WHERE name = 'items_scope'")
    }

    /// `PRAGMA quick_check`'s answer for the vault at `path`.
    public static func quickCheck(_ path: String) throws -> String {
        try query(path, "PRAGMA quick_check").values.first ?? "no answer"
    }

    /// Runs `sql` on its own connection (so that each step sees the schema the last one left).
    private static func execute(_ path: String, _ sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            sqlite3_close(db)
            throw RawSQLiteError(message: "cannot open \(path)")
        }
        defer { sqlite3_close(db) }
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            throw RawSQLiteError(message: message.map { String(cString: $0) } ?? "failed: \(sql)")
        }
    }

    /// The first two columns of `sql`'s rows, the first as an id (0 when it is not a number).
    private static func query(_ path: String, _ sql: String) throws -> [Int64: String] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            sqlite3_close(db)
            throw RawSQLiteError(message: "cannot open \(path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw RawSQLiteError(message: "cannot prepare \(sql)") }
        defer { sqlite3_finalize(statement) }
        var rows: [Int64: String] = [:]
        let columns = sqlite3_column_count(statement)
        while sqlite3_step(statement) == SQLITE_ROW {
            let text = sqlite3_column_text(statement, columns - 1).map { String(cString: $0) } ?? ""
            rows[columns > 1 ? sqlite3_column_int64(statement, 0) : 0] = text
        }
        return rows
    }
}

/// What SQLite said when a raw edit failed.
public struct RawSQLiteError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension String {
    fileprivate func replacingQuote() -> String {
        var out = ""
        for character in self { out += character == "'" ? "''" : String(character) }
        return out
    }
}
