internal import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// A failure reported by SQLite. Internal: the vault maps it to ``StoreError`` in one place.
/// It carries SQLite's message and the statement text, never bound values.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    let sql: String?
    /// The operating system's errno behind an I/O failure (EFBIG, ENOSPC, EROFS...), or 0.
    var systemErrno: Int32 = 0

    /// The primary result code (`SQLITE_BUSY` for `SQLITE_BUSY_SNAPSHOT`...).
    var primary: Int32 { code & 0xff }
    var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }
    var isConstraint: Bool { primary == SQLITE_CONSTRAINT }
    var isCorruption: Bool { primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB }
    var isFull: Bool { primary == SQLITE_FULL }
    var isReadOnly: Bool { primary == SQLITE_READONLY }
    /// A write or sync the kernel refused (SQLite rarely keeps the errno that says why).
    var isWriteFailure: Bool {
        code == csqlite_ioerr_write || code == csqlite_ioerr_fsync || code == csqlite_ioerr_truncate
    }
    /// Out of room: SQLite's own "full", or a write the kernel refused for space or size.
    var isOutOfSpace: Bool { isFull || (primary == SQLITE_IOERR && (systemErrno == ENOSPC || systemErrno == EFBIG || systemErrno == EDQUOT)) }

    /// A row the transaction saw a moment ago is not there: the file changed behind SQLite's
    /// back, which SQLite's own reports call corruption.
    static func vanished(_ what: String) -> SQLiteError { SQLiteError(code: SQLITE_CORRUPT, message: what, sql: nil) }

    var description: String {
        "SQLite error \(code): \(message)" + (sql.map { " (in \($0))" } ?? "")
    }
}
