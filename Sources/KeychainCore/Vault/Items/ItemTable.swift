/// The vault's item table, and the one place SQL reads and writes its rows: a row as a statement
/// returns it, the rows a statement finds (in the order and with the skips below), and each
/// write held to the rows it was meant to change. (The ledger's and the scope index's passes
/// that count rows, and an upgrade's rebuild of the table, run their own statements.)
///
/// Its rules:
/// - a row that does not even decode (an unknown class or protection code) is passed over, and
///   reported only when it was all there was (one damaged row never hides the others);
/// - rows read through the scope index come in strictly increasing id order, as the index
///   keeps them: a row repeated or out of order means the index is not the one SQLite built;
/// - an overwrite changes exactly the one row it names, and a delete exactly the rows it was
///   given: fewer means rows were removed behind SQLite's back, and is refused as tampering.
///
/// Knows no key, no ledger, no journal and no lock state: ``VaultState`` checks the ledger
/// before it reads or writes through here, seals and opens what is stored (``RowSealing``),
/// and counts each write into the ledger and the journal. A value made for each use, over the
/// connection (whose prepared statements it keeps) and the vault's format.
struct ItemTable {
    let connection: Connection
    /// The vault's format, which decides the columns a row has.
    let format: Int
    /// The vault's path, for what an error says.
    let path: String

    // MARK: - Reading

    /// The row under `s`; `scope`, when the statement selected rows by that scope digest, is
    /// taken for the row's own (the same bytes, so a listing copies none per row).
    func readRow(_ s: Statement, includeValue: Bool, scope: [UInt8]? = nil) throws(StoreError) -> ItemRow {
        guard let itemClass = ItemClass(code: UInt8(truncatingIfNeeded: s.integer(1))),
            let (accessibility, accessControl) = RecordCoding.protection(code: UInt8(truncatingIfNeeded: s.integer(2)))
        else { throw .corrupted("an item has an unknown class or protection code") }
        return ItemRow(
            id: s.integer(0), itemClass: itemClass, accessibility: accessibility, accessControl: accessControl, identity: s.blob(3),
            sealedAttributes: s.blob(4), value: includeValue ? s.blob(5) : nil, generation: UInt64(bitPattern: s.integer(6)), scope: scope ?? s.blob(7))
    }

    /// The row stored under `identity`, if any (its ledger shard is the caller's to check).
    func row(identity: [UInt8], includeValue: Bool) throws(StoreError) -> ItemRow? {
        try fetch(try statement(VaultSchema.selectByIdentity(format: format)), [.blob(identity)], includeValue: includeValue, limit: 1).first
    }

    /// The sealed value of `row`, read after the row was read without it.
    func sealedValue(of row: ItemRow) throws(StoreError) -> [UInt8] {
        try VaultState.sql { () throws(SQLiteError) -> [UInt8] in
            try connection.statement(VaultSchema.selectValue).with([.integer(row.id)]) { (s: Statement) throws(SQLiteError) -> [UInt8] in
                guard try s.step() else { throw SQLiteError.vanished("item vanished during the transaction") }
                return s.blob(0)
            }
        }
    }

    /// The statement that looks rows up by `lookup` (``VaultSchema/select(_:includeValue:byProtection:format:)``).
    func select(_ lookup: VaultSchema.Lookup, includeValue: Bool, byProtection: Bool) throws(StoreError) -> Statement {
        let slot = VaultSchema.select(lookup, includeValue: includeValue, byProtection: byProtection, format: format)
        return try VaultState.sql { () throws(SQLiteError) in try connection.statement(slot) }
    }

    /// Every row that decodes, in id order.
    func allRows() throws(StoreError) -> [ItemRow] {
        try fetch(try statement(VaultSchema.selectAllItems(format: format)), [], includeValue: true, limit: nil)
    }

    /// Every row in id order, with its value, as a check of the whole table wants them: a row
    /// that does not decode is handed on too, as why.
    func forEveryRow(_ body: (_ id: Int64, _ row: Result<ItemRow, StoreError>) -> Void) throws(StoreError) {
        let statement = try statement(VaultSchema.selectAllItems(format: format))
        try VaultState.sql { () throws(SQLiteError) in
            try statement.with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    let row: Result<ItemRow, StoreError>
                    do throws(StoreError) { row = .success(try readRow(s, includeValue: true)) } catch { row = .failure(error) }
                    body(s.integer(0), row)
                }
            }
        }
    }

    /// The rows still sealed the format-1 way (generation 0), carried over by an upgrade.
    func carriedRows() throws(StoreError) -> [ItemRow] {
        try fetch(try statement(VaultSchema.selectCarriedItems), [], includeValue: true, limit: nil)
    }

    /// Whether any row is still sealed the format-1 way.
    func holdsCarriedRows() throws(StoreError) -> Bool {
        try VaultState.sql { () throws(SQLiteError) -> Bool in
            try connection.statement(VaultSchema.anyCarriedItem).with([]) { (s: Statement) throws(SQLiteError) -> Bool in try s.step() }
        }
    }

    /// The rows of the passcode class (protection `code`) and those behind a proof of presence.
    func passcodeBoundRows(code: Int64) throws(StoreError) -> [ItemRow] {
        try fetch(try statement(VaultSchema.selectPasscodeBound(format: format)), [.integer(code)], includeValue: false, limit: nil)
    }

    /// How many rows the table holds, decoding or not.
    func count() throws(StoreError) -> Int {
        try VaultState.sql { () throws(SQLiteError) -> Int in
            try connection.statement(VaultSchema.countItems).with([]) { (s: Statement) throws(SQLiteError) -> Int in
                _ = try s.step()
                return Int(s.integer(0))
            }
        }
    }

    /// The rows a statement finds; a row that does not even decode (an unknown class or
    /// protection code) is passed over, and reported only when it was all there was.
    func fetch(_ statement: Statement, _ values: [Statement.Value], includeValue: Bool, limit: Int?) throws(StoreError) -> [ItemRow] {
        var rows: [ItemRow] = []
        try forEachRow(statement, values, includeValue: includeValue) { (row: inout ItemRow) throws(StoreError) -> Bool in
            rows.append(row)
            return limit.map { rows.count < $0 } ?? true
        }
        return rows
    }

    /// Visits the rows a statement finds, in order, until `body` returns false; a row that does
    /// not even decode is passed over, and reported only when it was all there was. `scope` is
    /// the digest the statement selects by, if it does (see ``readRow(_:includeValue:scope:)``):
    /// then the rows must come in strictly increasing id order, as the scope index keeps them.
    ///
    /// - Returns: how many rows the statement returned, when `body` never stopped it; nil when it did.
    @discardableResult
    func forEachRow(
        _ statement: Statement, _ values: [Statement.Value], includeValue: Bool, scope: [UInt8]? = nil,
        _ body: (inout ItemRow) throws(StoreError) -> Bool
    ) throws(StoreError) -> Int? {
        var failure: StoreError?
        var thrown: StoreError?
        var visited = false
        var returned = 0
        var lastID = Int64.min
        var stopped = false
        try VaultState.sql { () throws(SQLiteError) in
            try statement.with(values) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    returned += 1
                    if scope != nil {
                        // Repeated or out of order: the index is not the one SQLite built.
                        let id = s.integer(0)
                        guard id > lastID else {
                            thrown = Self.scopeIndexDisagrees(path, "a row returned twice or out of order")
                            return
                        }
                        lastID = id
                    }
                    var row: ItemRow
                    do throws(StoreError) {
                        row = try readRow(s, includeValue: includeValue, scope: scope)
                    } catch {
                        failure = failure ?? error
                        continue
                    }
                    visited = true
                    do throws(StoreError) {
                        guard try body(&row) else {
                            stopped = true
                            return
                        }
                    } catch {
                        thrown = error
                        return
                    }
                }
            }
        }
        if let thrown { throw thrown }
        if !visited, let failure { throw failure }
        return stopped ? nil : returned
    }

    /// Why a read through the scope index is refused: it disagrees with the table.
    static func scopeIndexDisagrees(_ path: String, _ how: String) -> StoreError {
        .tampered("\(path): the scope index (items_scope) disagrees with the item table (\(how)); keychain verify shows the damage, keychain recover saves the items")
    }

    // MARK: - Writing

    /// Stores a new row of `itemClass` under `protection`, sealed at `generation`; its id.
    func insert(_ itemClass: ItemClass, protection: UInt8, sealed: SealedRecord, generation: UInt64) throws(StoreError) -> Int64 {
        try VaultState.sql { () throws(SQLiteError) -> Int64 in
            try connection.statement(VaultSchema.insertItem).run([
                .integer(Int64(itemClass.code)), .integer(Int64(protection)), .blob(sealed.identity), .blob(sealed.scope), .blob(sealed.attributes),
                .blob(sealed.value), .integer(Int64(generation)),
            ])
            return connection.lastInsertRowID
        }
    }

    /// Writes `sealed` over `row`, under `protection`, at `generation` (the digests only when
    /// they changed). A row that is not there any more was removed behind SQLite's back (the
    /// transaction saw it a moment ago): `missing` says which write noticed.
    func overwrite(_ row: ItemRow, protection: UInt8, with sealed: SealedRecord, generation: UInt64, missing: String) throws(StoreError) {
        let changed = try VaultState.sql { () throws(SQLiteError) -> Int in
            if sealed.identity == row.identity && sealed.scope == row.scope {
                return try connection.statement(VaultSchema.replaceItemKeepingDigests).runCountingChanges([
                    .integer(Int64(protection)), .blob(sealed.attributes), .blob(sealed.value), .integer(Int64(generation)), .integer(row.id),
                ])
            }
            return try connection.statement(VaultSchema.replaceItem).runCountingChanges([
                .integer(Int64(protection)), .blob(sealed.identity), .blob(sealed.scope), .blob(sealed.attributes), .blob(sealed.value),
                .integer(Int64(generation)), .integer(row.id),
            ])
        }
        guard changed == 1 else { throw .tampered(missing) }
    }

    /// Deletes `rows`, refusing when fewer went than were given: one was not there to delete.
    func delete(_ rows: [ItemRow]) throws(StoreError) {
        let changed = try VaultState.sql { () throws(SQLiteError) -> Int in
            let statement = try connection.statement(VaultSchema.deleteItem)
            var changed = 0
            for row in rows { changed += try statement.runCountingChanges([.integer(row.id)]) }
            return changed
        }
        guard changed == rows.count else { throw .tampered("a delete did not remove the rows it matched") }
    }

    private func statement(_ sql: String) throws(StoreError) -> Statement {
        try VaultState.sql { () throws(SQLiteError) in try connection.statement(sql) }
    }
}
