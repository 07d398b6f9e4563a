import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// A pass over the table digests rows in arrays it keeps from row to row: the tallies it adds
/// up must be those of each row's own element, or every vault would read as tampered (or a
/// tampered one as whole).
@Suite("The ledger pass's row elements are each row's element, byte for byte")
struct LedgerRowElementsTests {
    let directory = TemporaryDirectory()

    @Test("rows of every identity length and large ids and generations add up to the tally of their own elements")
    func sameAsEachRowsElement() throws {
        let connection = try Connection(path: directory.path + "/rows.sqlite", create: true)
        try connection.execute("CREATE TABLE t(id INTEGER, class INTEGER, identity BLOB, generation INTEGER)")
        let rows: [ItemLedger.Row] = [
            .init(id: 1, itemClass: 0, identity: [], generation: 1),
            .init(id: 2, itemClass: 1, identity: [0xC7], generation: 2),
            .init(id: 3, itemClass: 2, identity: [0xFF, 0x41], generation: 3),
            .init(id: Int64.max, itemClass: 3, identity: [UInt8](repeating: 0xA5, count: 32), generation: UInt64(Int64.max)),
            .init(id: 4, itemClass: 1, identity: Array(0..<48), generation: 1 << 40),
        ]
        for row in rows {
            try connection.statement("INSERT INTO t VALUES(?, ?, ?, ?)").run([
                .integer(row.id), .integer(Int64(row.itemClass)), .blob(row.identity), .integer(Int64(bitPattern: row.generation)),
            ])
        }
        let key = HMACKey(SecretBytes.random(count: 32))
        let vaultID = [UInt8](repeating: 7, count: 16)
        var expected = LedgerTallies(count: 1)
        for row in rows { expected.count(ItemLedger.element(row, key: key, vaultID: vaultID), at: 0, inserted: true) }

        let state = LedgerState(ItemLedger(generation: 5, tally: LedgerTally(count: 0, digest: [UInt8](repeating: 0, count: Digest.size))))
        var elements = LedgerRowElements(key: key, vaultID: vaultID)
        var byState = LedgerTallies(count: 1), byShard = LedgerTallies(count: 1)
        try connection.statement("SELECT id, class, identity, generation FROM t").with([]) { (s: Statement) throws(SQLiteError) in
            while try s.step() {
                elements.count(s, into: &byState, state: state)
                elements.count(s, into: &byShard)
            }
        }
        #expect(byState[0] == expected[0])
        #expect(byShard[0] == expected[0])
        for row in rows {
            #expect(row.identity.withUnsafeBytes { LedgerShards.shard(of: $0) } == LedgerShards.shard(of: row.identity))
        }
    }
}
