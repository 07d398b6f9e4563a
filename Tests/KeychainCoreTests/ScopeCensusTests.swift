import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The rows under each scope, counted in a pass over the whole table, confirm later lookups
/// through the scope index only while they are the table's, and only when they agree: an
/// edited index is refused as it was when each lookup counted the table itself.
@Suite("A scope census confirms a lookup only while nothing was written, and never an edited index")
struct ScopeCensusTests {
    let directory = TemporaryDirectory()

    @Test("after a pass over the table, a lookup of another scope through a partial index is refused")
    func partialIndexAfterPass() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        for (service, account) in [("Valet1", "first"), ("Valet1", "second"), ("Other", "third")] {
            try vault.add(Item(.genericPassword, attributes: ScopeIndexTests.scope(service, account: account), value: secret("secret-\(account)")))
        }
        try ScopeIndexEdit.partial.apply(to: configuration.location.path, row: 1, other: 3)
        let reopened = try Vault(configuration)
        // The first lookup by scope passes over the table (its scope intact), taking the census.
        #expect(try reopened.copyMatching(Query(.genericPassword, attributes: ScopeIndexTests.scope("Other"))).count == 1)
        expectTampered({ _ = try reopened.copyMatching(Query(.genericPassword, attributes: ScopeIndexTests.scope("Valet1"))) }, "a listing the census did not count itself")
        expectTampered({ _ = try reopened.delete(Query(.genericPassword, attributes: ScopeIndexTests.scope("Valet1"))) }, "a clear through the edited index")
    }

    @Test("lookups of scopes after a pass, and after writes of this connection and of another, list every row")
    func intactAfterWrites() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        for account in ["a", "b"] { try vault.add(Item(.genericPassword, attributes: ScopeIndexTests.scope("S", account: account), value: secret(account))) }
        try vault.add(Item(.genericPassword, attributes: ScopeIndexTests.scope("T", account: "t"), value: secret("t")))
        let reopened = try Vault(configuration)
        #expect(try reopened.copyMatching(Query(.genericPassword, attributes: ScopeIndexTests.scope("T"))).count == 1)
        #expect(throws: StoreError.itemNotFound) { try reopened.copyMatching(Query(.genericPassword, attributes: ScopeIndexTests.scope("Empty"))) }
        try reopened.add(Item(.genericPassword, attributes: ScopeIndexTests.scope("S", account: "c"), value: secret("c")))
        #expect(try reopened.copyMatching(Query(.genericPassword, attributes: ScopeIndexTests.scope("S"))).count == 3, "this connection's write is counted")
        try vault.add(Item(.genericPassword, attributes: ScopeIndexTests.scope("U", account: "u"), value: secret("u")))
        #expect(try reopened.copyMatching(Query(.genericPassword, attributes: ScopeIndexTests.scope("U"))).count == 1, "another connection's write is counted")
    }

    @Test("the census stands only at the data version and change count it was taken at")
    func censusLapses() {
        var ledger = Ledger()
        ledger.verified(at: 7)
        ledger.keep(ScopeCensus(), changes: 3)
        #expect(ledger.census(changes: 3) != nil)
        #expect(ledger.census(changes: 4) == nil, "this connection wrote since")
        ledger.verified(at: 8)
        #expect(ledger.census(changes: 3) == nil, "another connection committed since")
        ledger.verified(at: 7)
        ledger.forget()
        #expect(ledger.census(changes: 3) == nil, "forgotten with the ledger")
    }

    @Test("the census counts each scope's rows; other lookups (by protection) are not its to confirm")
    func counts() throws {
        let connection = try Connection(path: directory.path + "/census.sqlite", create: true)
        try connection.execute("CREATE TABLE t(scope BLOB, class INTEGER)")
        let a = [UInt8](repeating: 1, count: 32), b = [UInt8](repeating: 2, count: 32)
        for (scope, itemClass) in [(a, 0), (a, 0), (a, 1), (b, 0)] {
            try connection.statement("INSERT INTO t VALUES(?, ?)").run([.blob(scope), .integer(Int64(itemClass))])
        }
        var census = ScopeCensus()
        try connection.statement("SELECT scope, class FROM t").with([]) { (s: Statement) throws(SQLiteError) in
            while try s.step() { census.count(s, scope: 0, itemClass: 1) }
        }
        #expect(census.rows(under: [.blob(a), .integer(0)]) == 2)
        #expect(census.rows(under: [.blob(a), .integer(1)]) == 1)
        #expect(census.rows(under: [.blob(b), .integer(0)]) == 1)
        #expect(census.rows(under: [.blob([UInt8](repeating: 3, count: 32)), .integer(0)]) == 0)
        #expect(census.rows(under: [.blob(a), .integer(0), .integer(5)]) == nil)
    }
}
