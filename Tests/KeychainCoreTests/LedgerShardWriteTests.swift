import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Writes to a format-3 vault check the ledger shards they write into, not every row (a fresh
/// process's `keychain set` of a 100,000-item vault scanned the whole table): a write beside a
/// tampered shard goes ahead and leaves that shard refused, a write into it writes nothing,
/// and group records stay exact when processes take turns writing into one group.
@Suite("The sharded ledger: a write checks the shards it writes into, and tampering is still never served")
struct LedgerShardWriteTests: LedgerShardFixture {
    let directory = TemporaryDirectory()

    func upsert(_ vault: Vault, _ account: String, _ value: String) throws {
        try vault.upsert(Item(.genericPassword, attributes: attributes(account), value: SecretBytes(utf8: value)))
    }

    /// The ledger's stored records and the item rows, to show that a refused write wrote nothing.
    func snapshot(_ raw: RawVault) throws -> [[UInt8]] {
        try raw.blobs("SELECT 0, value FROM meta WHERE name LIKE 'ledger%' ORDER BY name").map(\.1)
            + raw.blobs("SELECT id, value FROM items ORDER BY id").map(\.1)
    }

    @Test("a write into an intact shard goes ahead beside a tampered one, which stays refused")
    func writeBesideTamperedShard() throws {
        let (configuration, raw, victim, bystander) = try vaultWithTwoShards()
        // A new item outside the victim's shard: a fixed account falls in it once in 1,024 vaults.
        let victimShard = try shard(of: victim.account, configuration)
        let added = try account(configuration) { $0 != victimShard }
        try raw.connection.execute("DELETE FROM items WHERE id = \(victim.id)")
        try upsert(try Vault(configuration), bystander.account, "changed")
        try Vault(configuration).add(Item(.genericPassword, attributes: attributes(added), value: SecretBytes(utf8: "new")))
        let vault = try Vault(configuration)
        #expect(try read(vault, bystander.account) == "changed")
        #expect(try read(vault, added) == "new")
        expectTampered({ _ = try read(vault, victim.account) }, "the deleted row's shard, after writes beside it")
        expectTampered({ _ = try Vault(configuration).copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))) }, "a listing")
        #expect(try !Vault(configuration).verify().isSound, "verify still reports the deleted row")
    }

    @Test("a write into a tampered shard, or one that may meet any shard, writes nothing")
    func writeIntoTamperedShardWritesNothing() throws {
        let (configuration, raw, victim, bystander) = try vaultWithTwoShards()
        let victimShard = try shard(of: victim.account, configuration)
        let neighbour = try account(configuration) { $0 == victimShard }
        try raw.connection.execute("DELETE FROM items WHERE id = \(victim.id)")
        let before = try snapshot(raw)
        expectTampered({ try upsert(try Vault(configuration), victim.account, "put back") }, "the deleted item written again")
        expectTampered({ try upsert(try Vault(configuration), neighbour, "new") }, "a new item in the tampered shard")
        expectTampered(
            { try Vault(configuration).delete(Query(.genericPassword, attributes: Attributes(service: "s"))) }, "a delete by service, which meets every shard")
        expectTampered(
            {
                try Vault(configuration).write([
                    .upsert(Item(.genericPassword, attributes: attributes(bystander.account), value: SecretBytes(utf8: "batched"))),
                    .delete(Query(.genericPassword, attributes: Attributes(service: "s", account: victim.account))),
                ])
            }, "a batch with a delete by scope")
        #expect(try snapshot(raw) == before, "nothing written")
        #expect(try read(try Vault(configuration), bystander.account) == "value \(bystander.account.dropFirst())")
    }

    @Test("connections taking turns writing into one group keep its record exact")
    func turnsInOneGroup() throws {
        let (configuration, _, victim, _) = try vaultWithTwoShards()
        let victimShard = try shard(of: victim.account, configuration)
        let neighbour = try account(configuration) { $0 == victimShard }
        // Another shard of the same group: the group's record holds both shards' tallies.
        let sibling = try account(configuration) { $0 != victimShard && LedgerShards.group(of: $0) == LedgerShards.group(of: victimShard) }
        let first = try Vault(configuration), second = try Vault(configuration)
        try upsert(first, victim.account, "first 1")
        try upsert(second, sibling, "second 1")
        try upsert(first, neighbour, "first 2")
        try upsert(second, victim.account, "second 2")
        try first.delete(Query(.genericPassword, attributes: attributes(sibling)))
        let report = try Vault(configuration).verify()
        #expect(report.isSound, "\(report.ledger)")
        #expect(try read(try Vault(configuration), victim.account) == "second 2")
        #expect(try read(try Vault(configuration), neighbour) == "first 2")
        #expect(try !Vault(configuration).contains(Query(.genericPassword, attributes: attributes(sibling))))
    }
}
