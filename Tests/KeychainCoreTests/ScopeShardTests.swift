import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Format 4 keeps every item row in a scope shard of the ledger too, so that a read by scope
/// (a Valet's listing, a served collection's rows) checks the one scope shard its digest falls
/// in instead of every row of the vault. What a check of every row caught, that shard's check
/// must catch before a row of the scope is answered.
@Suite("A read by scope checks its scope shard, and still catches every edit of the scope's rows")
struct ScopeShardTests {
    let directory = TemporaryDirectory()

    static func scope(_ service: String, account: String? = nil) -> Attributes {
        var attributes = Attributes(service: service, account: account)
        attributes.accessGroup = "group"
        attributes.synchronizable = false
        return attributes
    }

    static let listing = Query(.genericPassword, attributes: scope("A"), returnData: true)

    /// A vault with three items of scope A and one of scope B; the row ids of A's items.
    func populated() throws -> (VaultConfiguration, [Int64]) {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        for (service, account) in [("A", "one"), ("A", "two"), ("A", "three"), ("B", "other")] {
            try vault.add(Item(.genericPassword, attributes: Self.scope(service, account: account), value: secret("\(service)-\(account)")))
        }
        #expect(vault.status().formatVersion == 4)
        let raw = try RawVault(configuration.location.path)
        let rows = try raw.blobs("SELECT id, identity FROM items ORDER BY id").map(\.0)
        return (configuration, Array(rows.prefix(3)))
    }

    @Test("a read by scope on a fresh connection checks its scope shard, not every row of the vault")
    func scopeReadChecksOneShard() throws {
        let (configuration, _) = try populated()
        let engine = try VaultEngine(configuration)
        #expect(try engine.copyMatching(Self.listing).count == 3)
        let unverified = try engine.inUse { (state) throws(StoreError) -> Int in state.ledger.state?.unverified ?? 0 }
        #expect(unverified > 0, "the listing left shards unchecked")
    }

    @Test("a row of the scope deleted from the file is caught by the scope's listing")
    func deletedRowCaught() throws {
        let (configuration, ids) = try populated()
        let raw = try RawVault(configuration.location.path)
        try raw.connection.statement("DELETE FROM items WHERE id = ?").run([.integer(ids[1])])
        expectTampered({ _ = try Vault(configuration).copyMatching(Self.listing) }, "a listing without the deleted item")
    }

    @Test("a row of the scope put back as an older copy held it is caught by the scope's listing")
    func olderRowCaught() throws {
        let (configuration, ids) = try populated()
        let raw = try RawVault(configuration.location.path)
        let older = try storedRow(raw, ids[0])
        _ = try Vault(configuration).update(Query(.genericPassword, attributes: Self.scope("A", account: "one")), attributes: Attributes(), value: secret("newer"))
        try raw.connection.statement("UPDATE items SET attributes = ?, value = ?, generation = ? WHERE id = ?").run([
            .blob(older.attributes), .blob(older.value), .integer(older.generation), .integer(ids[0]),
        ])
        expectTampered({ _ = try Vault(configuration).copyMatching(Self.listing) }, "a listing with the older value")
    }

    @Test("a row moved out of the scope (its scope digest replaced by another's) is caught by the scope's listing")
    func movedRowCaught() throws {
        let (configuration, ids) = try populated()
        let raw = try RawVault(configuration.location.path)
        let other = try raw.blobs("SELECT id, scope FROM items ORDER BY id")[3].1
        try raw.set("UPDATE items SET scope = ? WHERE id = ?", other, ids[2])
        expectTampered({ _ = try Vault(configuration).copyMatching(Self.listing) }, "a listing without the moved item")
    }

    func storedRow(_ raw: RawVault, _ id: Int64) throws -> (attributes: [UInt8], value: [UInt8], generation: Int64) {
        try raw.connection.statement("SELECT attributes, value, generation FROM items WHERE id = ?").with([.integer(id)]) {
            (s: Statement) throws(SQLiteError) in
            _ = try s.step()
            return (s.blob(0), s.blob(1), s.integer(2))
        }
    }
}

/// Vaults of format 3 (`Fixtures/format3`, made by its `MakeFixture.sh.txt` with release 0.11.0's
/// command) are read as they are, and upgraded to format 4 in one transaction at their first
/// write or unlock, every item kept.
@Suite("Format-3 vaults: read as they are, upgraded to format 4 in place")
struct FormatThreeUpgradeTests {
    let directory = TemporaryDirectory()
    static let passphrase = "fixture-passphrase"

    func copy(_ name: String) throws -> VaultConfiguration {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/format3").path
        for file in [name + ".keychain", name + ".keychain.key"] {
            let source = fixtures + "/" + file
            guard FileManager.default.fileExists(atPath: source) else { continue }
            let target = directory.path + "/" + file
            try FileManager.default.copyItem(atPath: source, toPath: target)
            chmod(target, 0o600)
        }
        return VaultConfiguration(
            location: VaultLocation(path: directory.path + "/\(name).keychain"), idleTimeout: nil, scryptParameters: .minimum, usesKernelKeyring: false)
    }

    func expectEveryItem(_ vault: Vault) throws {
        let fixture = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "fixture"), returnData: true))
        #expect(Set(fixture.compactMap { $0.value?.string }) == ["value 1", "value 2", "value 3"])
        let other = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "other", account: "one"), limit: .one, returnData: true))
        #expect(other.first?.value?.string == "other value")
        let web = try vault.copyMatching(Query(.internetPassword, attributes: Attributes(account: "web", server: "example.org"), limit: .one, returnData: true))
        #expect(web.first?.value?.string == "internet value")
    }

    @Test("a format-3 vault is read whole, by scope too, and left byte for byte as it was")
    func readWithoutWriting() throws {
        let configuration = try copy("keyfile")
        let before = FileManager.default.contents(atPath: configuration.location.path)
        let vault = try Vault(configuration)
        #expect(vault.status().formatVersion == 3)
        try expectEveryItem(vault)
        #expect(try vault.verify().ledger == "ok")
        #expect(FileManager.default.contents(atPath: configuration.location.path) == before && vault.status().formatVersion == 3)
    }

    @Test("the first write upgrades a format-3 key-file vault: its rows untouched, its ledger with scope shards, every item kept")
    func firstWriteUpgrades() throws {
        let configuration = try copy("keyfile")
        let raw = try RawVault(configuration.location.path)
        let rowsBefore = try raw.blobs("SELECT id, attributes || value FROM items ORDER BY id")
        try Vault(configuration).add(Item(.genericPassword, attributes: Attributes(service: "added", account: "new"), value: secret("after")))
        let vault = try Vault(configuration)
        #expect(vault.status().formatVersion == 4)
        #expect(Array(try raw.blobs("SELECT id, attributes || value FROM items ORDER BY id").prefix(rowsBefore.count)).map(\.1) == rowsBefore.map(\.1))
        let root = try raw.blobs("SELECT 0, value FROM meta WHERE name = 'ledger'")[0].1
        #expect(root.count == LedgerRoot.encodedSize(groups: LedgerShards.scopedGroupCount))
        let scopes = try raw.blobs("SELECT id, scope FROM items").map { LedgerShards.group(of: LedgerShards.scopeShard(of: $0.1)) }
        let names = Set(try raw.blobs("SELECT 0, name FROM meta WHERE name LIKE 'ledger/%'").map { String(decoding: $0.1, as: UTF8.self) })
        #expect(scopes.allSatisfy { names.contains(LedgerShards.recordName(ofGroup: $0)) }, "a record for every scope group that holds rows: \(names)")
        try expectEveryItem(vault)
        let fresh = try Vault(configuration)
        #expect(try fresh.copyMatching(Query(.genericPassword, attributes: Attributes(service: "added", account: "new"), returnData: true)).first?.value?.string == "after")
        let report = try fresh.verify()
        #expect(report.isSound && report.ledger == "ok" && report.intact == report.items, "\(report)")
    }

    @Test("unlocking a format-3 passphrase vault upgrades it; its items and a later scope listing are intact")
    func unlockUpgrades() throws {
        let configuration = try copy("passphrase")
        let vault = try Vault(configuration)
        #expect(vault.status().formatVersion == 3)
        try vault.unlock(passphrase: secret(Self.passphrase))
        #expect(vault.status().formatVersion == 4)
        try expectEveryItem(vault)
        let reopened = try Vault(configuration)
        try reopened.unlock(passphrase: secret(Self.passphrase))
        try expectEveryItem(reopened)
        #expect(try reopened.verify().ledger == "ok")
        #expect(try !RawVault(configuration.location.path).blobs("SELECT 0, value FROM meta WHERE name = 'carried/none'").isEmpty, "no row carried over")
    }

    @Test("a row deleted from an upgraded vault is caught by its scope's listing")
    func upgradedVaultStillTamperEvident() throws {
        let configuration = try copy("keyfile")
        try Vault(configuration).add(Item(.genericPassword, attributes: Attributes(service: "added", account: "new"), value: secret("after")))
        let raw = try RawVault(configuration.location.path)
        try raw.connection.statement("DELETE FROM items WHERE id = (SELECT min(id) FROM items)").run([])
        expectTampered(
            { _ = try Vault(configuration).copyMatching(Query(.genericPassword, attributes: Attributes(service: "fixture"), returnData: true)) },
            "a listing without the deleted item")
    }
}
