internal import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// A prepared statement (`sqlite3_stmt`), finalized when released. Not `Sendable`: it belongs
/// to the connection that prepared it and is used under that connection's lock.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    private unowned let connection: Connection

    init(connection: Connection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw connection.failure(rc, sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    enum Value {
        case null
        case integer(Int64)
        case blob([UInt8])
        case text(String)
    }

    /// Binds `values` (1-based, in order), runs `body`, then resets the statement and clears its
    /// bindings so no bound bytes linger in SQLite's memory longer than needed.
    func with<R>(_ values: [Value], _ body: (Statement) throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        connection.resetWorkBudget()
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), csqlite_transient()) }
            case .text(let s): rc = sqlite3_bind_text(handle, index, s, -1, csqlite_transient())
            }
            guard rc == SQLITE_OK else { throw connection.failure(rc, sql: sql) }
        }
        return try body(self)
    }

    /// Advances to the next row; false when done.
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(rc, sql: sql)
        }
    }

    func run(_ values: [Value] = []) throws(SQLiteError) {
        try with(values) { (s: Statement) throws(SQLiteError) in while try s.step() {} }
    }

    /// Runs an UPDATE or DELETE of one row and returns how many rows it changed (SQLite's own
    /// count), so the caller can check that exactly the row it meant was written.
    func runCountingChanges(_ values: [Value]) throws(SQLiteError) -> Int {
        try run(values)
        return Int(sqlite3_changes64(connection.handle))
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Runs `body` on the column's bytes where SQLite keeps them (no copy), valid until the
    /// statement steps or resets.
    func withBlob<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The column's first eight bytes (fewer, zero-padded, for a shorter blob) mixed with its
    /// length, read where SQLite keeps it (no copy): a key to count blobs by.
    func blobKey(_ column: Int32) -> UInt64 {
        let count = Int(sqlite3_column_bytes(handle, column))
        var key: UInt64 = 0
        if count > 0, let pointer = sqlite3_column_blob(handle, column) {
            withUnsafeMutableBytes(of: &key) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: min(count, 8))) }
        }
        return key ^ UInt64(count) &* 0x9E37_79B9_7F4A_7C15
    }

    /// Whether the column holds exactly `bytes`, compared where SQLite keeps it (no copy).
    func blobEquals(_ column: Int32, _ bytes: [UInt8]) -> Bool {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count == bytes.count else { return false }
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return count == 0 }
        return bytes.withUnsafeBytes { memcmp($0.baseAddress!, pointer, count) == 0 }
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        return String(cString: pointer)
    }
}
