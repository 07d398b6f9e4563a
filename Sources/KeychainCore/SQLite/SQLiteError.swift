internal import CSQLite

/// A failure reported by SQLite. Internal: the vault maps it to ``StoreError`` in one place.
/// It carries SQLite's message and the statement text, never bound values.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    let sql: String?

    /// The primary result code (`SQLITE_BUSY` for `SQLITE_BUSY_SNAPSHOT`...).
    var primary: Int32 { code & 0xff }
    var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }
    var isConstraint: Bool { primary == SQLITE_CONSTRAINT }
    var isCorruption: Bool { primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB }
    var isFull: Bool { primary == SQLITE_FULL }
    var isReadOnly: Bool { primary == SQLITE_READONLY }

    var description: String {
        "SQLite error \(code): \(message)" + (sql.map { " (in \($0))" } ?? "")
    }
}
