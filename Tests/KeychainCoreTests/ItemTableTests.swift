import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The item table (``ItemTable``) on its own, over a new vault's real schema and a connection of
/// its own: the rules it keeps of how rows are read and written, whatever the vault around it
/// checks first. The table neither seals nor opens, so its records here are opaque bytes.
@Suite("The item table: rows read whole and in order, writes held to the rows they name")
struct ItemTableTests {
    let directory = TemporaryDirectory()
    static let scope = [UInt8](repeating: 0x33, count: Digest.size)
    static let protection = RecordCoding.protectionCode(.whenUnlocked, nil)

    /// The item table of a new vault, on a connection of its own.
    func table() throws -> ItemTable {
        let configuration = directory.vaultConfiguration()
        try VaultState.create(configuration)
        let path = configuration.location.path
        return ItemTable(connection: try Connection(path: path, create: false), format: Int(VaultHeader.currentVersion), path: path)
    }

    static func identity(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: Digest.size) }

    static func record(_ n: UInt8) -> SealedRecord {
        SealedRecord(identity: identity(n), scope: scope, attributes: [n, 1], value: [n, 2])
    }

    /// Adds row `n` (identity `n`, in the one scope); its id.
    @discardableResult
    func add(_ table: ItemTable, _ n: UInt8) throws -> Int64 {
        try table.insert(.genericPassword, protection: Self.protection, sealed: Self.record(n), generation: 1)
    }

    /// Every row, in the order `order` puts them (a scope index that is not the one SQLite built may return them so).
    func rows(_ table: ItemTable, _ order: String) throws -> Statement {
        try table.connection.statement("SELECT \(VaultSchema.itemColumns(format: table.format)) FROM items \(order)")
    }

    func visit(_ table: ItemTable, _ statement: Statement, scope: [UInt8]?) throws -> [Int64] {
        var ids: [Int64] = []
        try table.forEachRow(statement, [], includeValue: false, scope: scope) { (row: inout ItemRow) throws(StoreError) -> Bool in
            ids.append(row.id)
            return true
        }
        return ids
    }

    @Test("a row inserted is found by its identity as it was stored, its value read on its own, and counted")
    func aRowInsertedReadsBack() throws {
        let table = try table()
        let first = try add(table, 1)
        let second = try add(table, 2)
        #expect(second > first)
        let row = try #require(try table.row(identity: Self.identity(2), includeValue: false))
        #expect(row.id == second && row.itemClass == .genericPassword && row.accessibility == .whenUnlocked && row.generation == 1)
        #expect(row.sealedAttributes == [2, 1] && row.value == nil && row.scope == Self.scope)
        #expect(try table.sealedValue(of: row) == [2, 2])
        #expect(try table.row(identity: Self.identity(3), includeValue: true) == nil)
        #expect(try table.count() == 2)
    }

    @Test("a row that does not decode is passed over beside others, and reported when it was all there was")
    func anUndecodableRowIsPassedOver() throws {
        let table = try table()
        let broken = try add(table, 1)
        let whole = try add(table, 2)
        try table.connection.execute("UPDATE items SET class = 99 WHERE id = \(broken)")
        #expect(try table.allRows().map(\.id) == [whole], "the damaged row never hides the whole one")
        #expect(try table.count() == 2, "the count is of rows stored, decoding or not")
        try table.connection.execute("DELETE FROM items WHERE id = \(whole)")
        #expect(throws: StoreError.corrupted("an item has an unknown class or protection code")) { try table.allRows() }
    }

    @Test("rows read by scope come in strictly increasing id order: a row out of order or returned twice is refused")
    func rowsByScopeComeInIDOrder() throws {
        let table = try table()
        try add(table, 1)
        try add(table, 2)
        let disagrees = ItemTable.scopeIndexDisagrees(table.path, "a row returned twice or out of order")
        #expect(throws: disagrees) { try visit(table, try rows(table, "ORDER BY id DESC"), scope: Self.scope) }
        let twice = try table.connection.statement(
            "SELECT \(VaultSchema.itemColumns(format: table.format)) FROM items UNION ALL SELECT \(VaultSchema.itemColumns(format: table.format)) FROM items ORDER BY id")
        #expect(throws: disagrees) { try visit(table, twice, scope: Self.scope) }
        #expect(try visit(table, try rows(table, "ORDER BY id"), scope: Self.scope) == [1, 2])
        #expect(try visit(table, try rows(table, "ORDER BY id DESC"), scope: nil) == [2, 1], "only a read by scope is held to the index's order")
    }

    @Test("a visit says how many rows the statement returned when it ran to the end, nothing when its body stopped it")
    func aVisitCountsWhatItReturned() throws {
        let table = try table()
        try add(table, 1)
        let broken = try add(table, 2)
        try table.connection.execute("UPDATE items SET protection = 250 WHERE id = \(broken)")
        let all = try table.forEachRow(try rows(table, "ORDER BY id"), [], includeValue: false, scope: Self.scope) { (_: inout ItemRow) throws(StoreError) in true }
        #expect(all == 2, "a row that does not decode was still returned: the scope index's count is of rows returned")
        let stopped = try table.forEachRow(try rows(table, "ORDER BY id"), [], includeValue: false) { (_: inout ItemRow) throws(StoreError) in false }
        #expect(stopped == nil)
        #expect(try table.fetch(try rows(table, "ORDER BY id"), [], includeValue: true, limit: 1).map(\.value) == [[1, 2]])
    }

    @Test("an overwrite changes the one row it names, and a row gone behind SQLite's back is refused as tampering in the write's words")
    func anOverwriteChangesItsRow() throws {
        let table = try table()
        try add(table, 1)
        let row = try #require(try table.row(identity: Self.identity(1), includeValue: false))
        var kept = Self.record(1)
        kept.value = [9]
        try table.overwrite(row, protection: Self.protection, with: kept, generation: 2, missing: "an update did not change the row it matched")
        #expect(try table.row(identity: Self.identity(1), includeValue: true).map { [$0.generation: $0.value!] } == [2: [9]])
        try table.overwrite(row, protection: Self.protection, with: Self.record(5), generation: 3, missing: "an update did not change the row it matched")
        #expect(try table.row(identity: Self.identity(1), includeValue: false) == nil && table.row(identity: Self.identity(5), includeValue: false)?.id == row.id)
        try table.connection.execute("DELETE FROM items WHERE id = \(row.id)")
        // Both statements: one keeping the digests, one replacing them.
        for record in [Self.record(1), Self.record(5)] {
            #expect(throws: StoreError.tampered("a rekey did not rewrite the row it read")) {
                try table.overwrite(row, protection: Self.protection, with: record, generation: 4, missing: "a rekey did not rewrite the row it read")
            }
        }
    }

    @Test("a delete that removed fewer rows than it was given is refused as tampering")
    func aDeleteRemovesEveryRowItWasGiven() throws {
        let table = try table()
        try add(table, 1)
        let gone = try add(table, 2)
        try add(table, 3)
        let rows = try table.allRows()
        try table.connection.execute("DELETE FROM items WHERE id = \(gone)")
        #expect(throws: StoreError.tampered("a delete did not remove the rows it matched")) { try table.delete(rows) }
        try table.delete(try table.allRows())
        #expect(try table.count() == 0)
    }

    @Test("the value of a row gone since it was read is damage, never an empty value")
    func theValueOfAVanishedRowIsDamage() throws {
        let table = try table()
        try add(table, 1)
        let row = try #require(try table.row(identity: Self.identity(1), includeValue: false))
        try table.connection.execute("DELETE FROM items WHERE id = \(row.id)")
        do {
            _ = try table.sealedValue(of: row)
            Issue.record("a value was read from a row that is gone")
        } catch {
            #expect(error.isDamage)
        }
    }
}
