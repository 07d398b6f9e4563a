import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// A vault of sixteen items spread over format 3's ledger shards, for the suites that edit one
/// shard and watch what the others do (``LedgerShardTests``, ``LedgerShardWriteTests``).
protocol LedgerShardFixture {
    var directory: TemporaryDirectory { get }
}

extension LedgerShardFixture {
    /// Fully named (access group and synchronizable too), as Valet and the command name their
    /// items: a read of it looks its identity digest up.
    func attributes(_ account: String) -> Attributes {
        Attributes(service: "s", account: account, accessGroup: "g", synchronizable: false)
    }

    func read(_ vault: Vault, _ account: String) throws -> String? {
        try vault.copyMatching(Query(.genericPassword, attributes: attributes(account), limit: .one, returnData: true)).first?.value?.string
    }

    /// A vault of sixteen items, and two of them in different shard groups: the one an attacker edits
    /// (`victim`) and one beside it (`bystander`), with their row ids.
    func vaultWithTwoShards(kernelKeyring: Bool = false) throws -> (
        configuration: VaultConfiguration, raw: RawVault, victim: (account: String, id: Int64), bystander: (account: String, id: Int64)
    ) {
        let configuration = directory.vaultConfiguration(kernelKeyring: kernelKeyring)
        let vault = try Vault(configuration)
        for index in 0..<16 { try vault.add(Item(.genericPassword, attributes: attributes("a\(index)"), value: SecretBytes(utf8: "value \(index)"))) }
        let raw = try RawVault(configuration.location.path)
        let rows = try raw.blobs("SELECT id, identity FROM items ORDER BY id")
        // Apart by group, so that no ledger record vouches for both.
        let victimGroup = LedgerShards.group(of: LedgerShards.shard(of: rows[0].1))
        let other = try #require(rows.firstIndex { LedgerShards.group(of: LedgerShards.shard(of: $0.1)) != victimGroup })
        return (configuration, raw, ("a0", rows[0].0), ("a\(other)", rows[other].0))
    }

    /// The record of the group holding row `id`'s shard.
    func groupRecord(_ raw: RawVault, holding id: Int64) throws -> (name: String, bytes: [UInt8]) {
        let identity = try raw.blobs("SELECT id, identity FROM items WHERE id = \(id)")[0].1
        let name = LedgerShards.recordName(ofGroup: LedgerShards.group(of: LedgerShards.shard(of: identity)))
        return (name, try raw.blobs("SELECT 0, value FROM meta WHERE name = '\(name)'")[0].1)
    }

    func putRecord(_ raw: RawVault, _ name: String, _ bytes: [UInt8]) throws {
        try raw.connection.statement("INSERT OR REPLACE INTO meta(name, value) VALUES(?, ?)").run([.text(name), .blob(bytes)])
    }

    /// The ledger shard an item of `account` falls in.
    func shard(of account: String, _ configuration: VaultConfiguration) throws -> Int {
        try shards(configuration)(account)
    }

    /// An account whose item falls in a ledger shard `wanted` accepts (1 in 1,024 accounts falls in a given shard).
    func account(_ configuration: VaultConfiguration, _ wanted: (_ shard: Int) -> Bool) throws -> String {
        let shard = try shards(configuration)
        for index in 0..<100_000 where wanted(try shard("picked-\(index)")) { return "picked-\(index)" }
        throw StoreError.invalidArgument("no account falls in the shard asked for")
    }

    /// The shard of an account's item, by the vault's own identity digest (one vault opened for every call).
    private func shards(_ configuration: VaultConfiguration) throws -> (String) throws -> Int {
        let vault = try VaultEngine(configuration)
        return { account in
            LedgerShards.shard(of: try vault.inUse { (state) throws(StoreError) in try state.identityDigest(.genericPassword, attributes(account)) })
        }
    }
}
