import CSQLite

/// Direct SQLite access to a vault file, to damage it as a bad disk or an attacker would.
enum RawSQL {
    /// Runs `sql` on the database at `path`; false if SQLite refused (a damaged file may).
    @discardableResult
    static func exec(_ path: String, _ sql: String) -> Bool {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { sqlite3_close(db); return false }
        defer { sqlite3_close(db) }
        return sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK
    }

    /// The blobs in the first column of `sql`'s rows.
    static func blobs(_ path: String, _ sql: String) -> [[UInt8]] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { sqlite3_close(db); return [] }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(statement) }
        var out: [[UInt8]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let count = Int(sqlite3_column_bytes(statement, 0))
            if let pointer = sqlite3_column_blob(statement, 0) {
                out.append(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
            }
        }
        return out
    }
}
