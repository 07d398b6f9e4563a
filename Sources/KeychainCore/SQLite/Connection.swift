internal import CSQLite

/// One SQLite connection (`sqlite3*`), opened in multi-thread mode and used by one owner at a
/// time (the vault keeps it behind a lock). Statements are prepared once and cached.
final class Connection {
    let handle: OpaquePointer
    private var cache: [String: Statement] = [:]
    /// The statements kept by slot (`StatementSlot.index`) rather than by text.
    private var slots: [Statement?] = []
    /// What one statement may still do, in thousands of SQLite VM instructions (reset by each
    /// statement): about a billion instructions, seconds of work, far above any vault's needs.
    let workBudget = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    static let statementWork = 1_000_000

    /// Called before each statement runs.
    func resetWorkBudget() { workBudget.pointee = Self.statementWork }

    /// Opens (creating if asked) the database at `path` in WAL mode with `synchronous=FULL`
    /// and a busy timeout, so that concurrent writers in other processes wait instead of failing.
    ///
    /// The file is never followed through a symbolic link, its schema is never trusted (no
    /// side effects from views or triggers), and the work one statement may do is bounded, so a
    /// crafted file cannot make a call hang.
    ///
    /// With `persistentSidecars`, the `-wal` and `-shm` files stay beside the database after the
    /// last connection closes (the WAL is still checkpointed into the file, then emptied): a
    /// reader that finds them creates and unlinks nothing, so reads leave the directory as it was.
    init(
        path: String, create: Bool, readOnly: Bool = false, persistentSidecars: Bool = true,
        busyTimeoutMilliseconds: Int32 = 15_000
    ) throws(SQLiteError) {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOFOLLOW
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            // The handle must be closed even when open fails (sqlite3_open_v2's contract).
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message, sql: nil)
        }
        handle = db
        workBudget.pointee = Self.statementWork
        do {
            _ = csqlite_enable_defensive(db)
            _ = csqlite_distrust_schema(db)
            // No value or attribute record comes near this; a crafted one gets an error, not memory.
            sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 << 20)
            sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 16)
            sqlite3_progress_handler(
                db, 1_000,
                { budget in
                    guard let budget = budget?.assumingMemoryBound(to: Int.self) else { return 0 }
                    budget.pointee -= 1
                    return budget.pointee < 0 ? 1 : 0
                }, workBudget)
            sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
            if !readOnly {
                try execute("PRAGMA journal_mode=WAL")
            }
            if persistentSidecars {
                var persist: Int32 = 1
                _ = sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
                // A kept WAL is emptied after each checkpoint, never left at its largest.
                try execute("PRAGMA journal_size_limit=0")
            }
            try execute("PRAGMA synchronous=FULL")
            try execute("PRAGMA secure_delete=ON")
            try execute("PRAGMA foreign_keys=ON")
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    deinit {
        cache.removeAll()
        slots.removeAll()
        sqlite3_close_v2(handle)
        workBudget.deallocate()
    }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }
    func extendedCode(_ rc: Int32) -> Int32 { sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : rc }

    /// The error for a failed call: SQLite's extended code and message, and the errno behind it.
    func failure(_ rc: Int32, message: String? = nil, sql: String?) -> SQLiteError {
        SQLiteError(code: extendedCode(rc), message: message ?? lastMessage, sql: sql, systemErrno: sqlite3_system_errno(handle))
    }
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Whether the database file this connection has open is no longer the file at its path
    /// (renamed, unlinked or replaced): its writes would then go to a `-wal` named after a path
    /// that now belongs to another file, or to none.
    var fileHasMoved: Bool {
        var moved: Int32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK else { return false }
        return moved != 0
    }

    /// Runs SQL that returns no rows (may be several statements).
    func execute(_ sql: String) throws(SQLiteError) {
        resetWorkBudget()
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(message)
            throw failure(rc, message: text, sql: sql)
        }
    }

    /// The cached prepared statement for `sql`.
    func statement(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = cache[sql] { return cached }
        let statement = try Statement(connection: self, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// The statement in `slot`, prepared on first use.
    func statement(_ slot: StatementSlot) throws(SQLiteError) -> Statement {
        if slot.index < slots.count, let prepared = slots[slot.index] { return prepared }
        let statement = try Statement(connection: self, sql: slot.sql)
        if slot.index >= slots.count { slots += repeatElement(nil, count: slot.index + 1 - slots.count) }
        slots[slot.index] = statement
        return statement
    }

    private static let begin = StatementSlot("BEGIN")
    private static let commit = StatementSlot("COMMIT")
    private static let dataVersion = StatementSlot("PRAGMA data_version")

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: commits if it returns, rolls back if it
    /// throws, and rethrows the body's error. IMMEDIATE takes the write lock up front, so two
    /// processes never both read, then both try to upgrade and deadlock into SQLITE_BUSY.
    func writeTransaction<R, E: Error>(_ body: () throws(E) -> R) throws(TransactionError<E>) -> R {
        do { try execute("BEGIN IMMEDIATE") } catch { throw .database(error) }
        let result: R
        do {
            result = try body()
        } catch {
            rollback()
            throw .body(error)
        }
        do {
            try execute("COMMIT")
        } catch {
            rollback()
            throw .database(error)
        }
        return result
    }

    /// Runs `body` in a read transaction, so that everything it reads comes from one snapshot
    /// of the file; inside a transaction already, it just runs `body` there.
    func readTransaction<R, E: Error>(_ body: () throws(E) -> R) throws(TransactionError<E>) -> R {
        if isInTransaction {
            do { return try body() } catch { throw .body(error) }
        }
        do { try statement(Self.begin).run() } catch { throw .database(error) }
        // Nothing was written: ending the snapshot cannot lose anything.
        defer { if isInTransaction { try? statement(Self.commit).run() } }
        do { return try body() } catch { throw .body(error) }
    }

    /// How many rows this connection's statements have inserted, changed or deleted since it
    /// opened (`sqlite3_total_changes64`): grows with every write of its own, committed or not.
    func totalChanges() -> Int64 { sqlite3_total_changes64(handle) }

    /// Changes whenever another connection commits to the file (`PRAGMA data_version`); stable
    /// within a transaction.
    func dataVersion() throws(SQLiteError) -> Int64 {
        try statement(Self.dataVersion).with([]) { (s: Statement) throws(SQLiteError) -> Int64 in
            _ = try s.step()
            return s.integer(0)
        }
    }

    /// The row id the last INSERT on this connection gave.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    private func rollback() {
        // Ask SQLite rather than guess: some errors already rolled the transaction back.
        if isInTransaction { try? execute("ROLLBACK") }
    }
}

/// Either the database failed to begin or commit, or the body threw.
enum TransactionError<E: Error>: Error {
    case database(SQLiteError)
    case body(E)
}
