import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Format 3's sharded ledger (performance issue: a fresh process's read no longer checks every
/// row of the vault): a read by identity checks its own shard, and every edit the ledger caught
/// before is still caught by any read that meets it.
@Suite("The sharded ledger: a read checks its own shard, and tampering is still never served")
struct LedgerShardTests: LedgerShardFixture {
    let directory = TemporaryDirectory()

    @Test("a deleted row stops the reads that meet its shard (by identity, a listing, contains) and no other")
    func pointReadChecksItsOwnShard() throws {
        let (configuration, raw, victim, bystander) = try vaultWithTwoShards()
        try raw.connection.execute("DELETE FROM items WHERE id = \(victim.id)")
        let vault = try Vault(configuration)
        #expect(try read(vault, bystander.account) == "value \(bystander.account.dropFirst())", "its shard is vouched for")
        expectTampered({ _ = try read(vault, victim.account) }, "the deleted row's own read")
        expectTampered({ _ = try Vault(configuration).contains(Query(.genericPassword, attributes: attributes(victim.account))) }, "contains")
        expectTampered({ _ = try Vault(configuration).copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))) }, "a listing")
        expectTampered({ _ = try read(vault, victim.account) }, "asked again, the same shard is still refused")
    }

    @Test("one item asked for by service and account is found at the default access group through its own shard; elsewhere by a search of every shard")
    func readByNameChecksItsOwnShard() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        func named(_ account: String) -> Attributes { Attributes(service: "t", account: account) }
        func read(_ account: String) throws -> String? {
            try Vault(configuration).copyMatching(Query(.genericPassword, attributes: named(account), limit: .one, returnData: true)).first?.value?.string
        }
        for index in 0..<16 { try vault.add(Item(.genericPassword, attributes: named("d\(index)"), value: SecretBytes(utf8: "v\(index)"))) }
        var grouped = named("grouped")
        grouped.accessGroup = "other"
        try vault.add(Item(.genericPassword, attributes: grouped, value: SecretBytes(utf8: "in a group")))
        #expect(try read("grouped") == "in a group", "found by the search when not at the defaults")
        let raw = try RawVault(configuration.location.path)
        let rows = try raw.blobs("SELECT id, identity FROM items ORDER BY id")
        let bystander = try #require(rows.firstIndex { LedgerShards.shard(of: $0.1) != LedgerShards.shard(of: rows[0].1) })
        try raw.connection.execute("DELETE FROM items WHERE id = \(rows[0].0)")
        #expect(try read("d\(bystander)") == "v\(bystander)", "its own shard is vouched for")
        let command = try KeychainExecutable.run(["get", "--vault", configuration.location.path, "--service", "t", "d\(bystander)"], home: directory.path)
        #expect(command.status == 0 && command.output == "v\(bystander)\n", "\(command.stderr)")
        expectTampered({ _ = try read("d0") }, "the deleted item")
        expectTampered({ _ = try read("grouped") }, "an item the search finds, which meets every shard")
    }

    @Test("a shard checked before is checked again once another connection changed the file")
    func checkedShardRecheckedAfterChange() throws {
        let (configuration, raw, victim, _) = try vaultWithTwoShards()
        let vault = try Vault(configuration)
        #expect(try read(vault, victim.account) == "value 0")
        try raw.connection.execute("DELETE FROM items WHERE id = \(victim.id)")
        expectTampered({ _ = try read(vault, victim.account) }, "a missing item, not 'not found'")
    }

    @Test("a row and its group's record both put back from an older copy are refused: the root names the group's newer generation")
    func olderShardRecordRefused() throws {
        let (configuration, raw, victim, bystander) = try vaultWithTwoShards()
        let oldRow = try raw.blobs("SELECT id, value FROM items WHERE id = \(victim.id)")[0].1
        let oldGeneration = try raw.blobs("SELECT generation, id FROM items WHERE id = \(victim.id)")[0].0
        let oldAttributes = try raw.blobs("SELECT id, attributes FROM items WHERE id = \(victim.id)")[0].1
        let oldRecord = try groupRecord(raw, holding: victim.id)
        try Vault(configuration).upsert(Item(.genericPassword, attributes: attributes(victim.account), value: SecretBytes(utf8: "current")))
        try raw.connection.statement("UPDATE items SET value = ?, attributes = ?, generation = ? WHERE id = ?").run([
            .blob(oldRow), .blob(oldAttributes), .integer(oldGeneration), .integer(victim.id),
        ])
        try putRecord(raw, oldRecord.name, oldRecord.bytes)
        let vault = try Vault(configuration)
        expectTampered({ _ = try read(vault, victim.account) }, "the older value with its older record")
        #expect(try read(vault, bystander.account) != nil)
    }

    @Test("a group's record copied over another group's does not verify there")
    func recordMovedRefused() throws {
        let (configuration, raw, victim, bystander) = try vaultWithTwoShards()
        let victimRecord = try groupRecord(raw, holding: victim.id)
        let bystanderRecord = try groupRecord(raw, holding: bystander.id)
        try putRecord(raw, bystanderRecord.name, victimRecord.bytes)
        let vault = try Vault(configuration)
        expectTampered({ _ = try read(vault, bystander.account) }, "another group's record")
        #expect(try read(vault, victim.account) == "value 0")
    }

    @Test("an older root put back over newer records refuses the shards it no longer vouches for, and serves nothing older")
    func olderRootServesNothingOlder() throws {
        let (configuration, raw, victim, bystander) = try vaultWithTwoShards()
        let oldRoot = try raw.blobs("SELECT 0, value FROM meta WHERE name = 'ledger'")[0].1
        try Vault(configuration).upsert(Item(.genericPassword, attributes: attributes(bystander.account), value: SecretBytes(utf8: "current")))
        try putRecord(raw, "ledger", oldRoot)
        let vault = try Vault(configuration)
        expectTampered({ _ = try read(vault, bystander.account) }, "the shard written after the older root")
        #expect(try read(vault, victim.account) == "value 0", "a shard both roots agree on is current")
    }

    @Test(
        "an older root with one shard's older record and rows is a rollback, refused while this boot remembers the newer generation",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func partialRollbackRefused() throws {
        let (configuration, raw, victim, _) = try vaultWithTwoShards(kernelKeyring: true)
        let opened = try VaultEngine(configuration)
        defer { opened.locked { $0.forgetGeneration() } }
        let oldRoot = try raw.blobs("SELECT 0, value FROM meta WHERE name = 'ledger'")[0].1
        let oldRecord = try groupRecord(raw, holding: victim.id)
        let oldRow = try raw.blobs("SELECT id, value FROM items WHERE id = \(victim.id)")[0].1
        let oldAttributes = try raw.blobs("SELECT id, attributes FROM items WHERE id = \(victim.id)")[0].1
        let oldGeneration = try raw.blobs("SELECT generation, id FROM items WHERE id = \(victim.id)")[0].0
        try Vault(configuration).upsert(Item(.genericPassword, attributes: attributes(victim.account), value: SecretBytes(utf8: "revoked later")))
        try raw.connection.statement("UPDATE items SET value = ?, attributes = ?, generation = ? WHERE id = ?").run([
            .blob(oldRow), .blob(oldAttributes), .integer(oldGeneration), .integer(victim.id),
        ])
        try putRecord(raw, oldRecord.name, oldRecord.bytes)
        try putRecord(raw, "ledger", oldRoot)
        #expect {
            _ = try read(try Vault(configuration), victim.account)
        } throws: { error in
            guard case .tampered(let reason) = error as? StoreError else { return false }
            return reason.contains("rolled back")
        }
    }

    @Test("every identity falls in the one shard whose range of the identity index holds it, hostile short ones too")
    func shardsPartitionTheIndex() {
        var identities: [[UInt8]] = [[], [0], [1], [0x3F], [0x40], [0xFF], [0, 0], [0, 0x3F], [0, 0x40], [0xFF, 0xFF], [0xFF, 0xC0, 1]]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { identities.append((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        for identity in identities {
            let shard = LedgerShards.shard(of: identity)
            #expect((0..<LedgerShards.itemShards).contains(shard))
            // SQLite orders blobs by their bytes, then by length: as Swift's lexicographic order.
            let aboveLower = shard == 0 || !identity.lexicographicallyPrecedes(LedgerShards.lowerBound(shard))
            let belowUpper = shard == LedgerShards.itemShards - 1 || identity.lexicographicallyPrecedes(LedgerShards.lowerBound(shard + 1))
            #expect(aboveLower && belowUpper, "\(identity.prefix(4)) in shard \(shard)")
        }
    }

    @Test("group records: named apart, found by name, and each opens only for its own group and generation; the root round-trips")
    func groupRecords() {
        let key = HMACKey(SecretBytes([UInt8](repeating: 7, count: 32)))
        let vaultID = [UInt8](repeating: 1, count: VaultHeader.vaultIDSize)
        let names = (0..<LedgerShards.groupCount).map(LedgerShards.recordName(ofGroup:))
        #expect(Set(names).count == LedgerShards.groupCount)
        #expect(names.enumerated().allSatisfy { LedgerShards.group(ofRecordName: Array($0.element.utf8)) == $0.offset })
        #expect(["ledger", "ledger/99", "ledger/0001", "ledger/g1"].allSatisfy { LedgerShards.group(ofRecordName: Array($0.utf8)) == nil })
        #expect((0..<LedgerShards.groupCount).map { LedgerShards.shards(ofGroup: $0).count }.reduce(0, +) == LedgerShards.count)
        #expect(LedgerShards.shards(ofGroup: LedgerShards.group(of: LedgerShards.journalShard)) == LedgerShards.journalShard..<LedgerShards.count)
        var tallies = LedgerTallies(count: LedgerShards.groupSize)
        tallies.count([UInt8](repeating: 3, count: Digest.size), at: 3, inserted: true)
        let record = LedgerShards.encodedRecord(tallies, group: 5, generation: 9, key: key, vaultID: vaultID)
        #expect(LedgerShards.decodeRecord(record, group: 5, generation: 9, key: key, vaultID: vaultID) == tallies)
        #expect(LedgerShards.decodeRecord(record, group: 6, generation: 9, key: key, vaultID: vaultID) == nil)
        #expect(LedgerShards.decodeRecord(record, group: 5, generation: 8, key: key, vaultID: vaultID) == nil)
        var root = LedgerRoot.empty
        root.setGeneration(9, ofGroup: 5)
        #expect(root.generation(ofGroup: 5) == 9 && root.generation(ofGroup: 4) == 0 && root.generation(ofGroup: 6) == 0)
        root.generation = 9
        #expect(LedgerRoot.decode(root.encoded(key: key, vaultID: vaultID), key: key, vaultID: vaultID) == root)
        #expect(LedgerRoot.decode(LedgerRoot.empty.encoded(key: key, vaultID: vaultID), key: key, vaultID: [UInt8](repeating: 2, count: 16)) == nil)
    }

    @Test("flat tallies: a row counted in and out leaves its shard empty; a group's slice holds its shards' tallies")
    func flatTallies() {
        var tallies = LedgerTallies(count: 40)
        let element = (0..<Digest.size).map { UInt8($0 * 7 & 0xFF) }
        tallies.count(element, at: 17, inserted: true)
        #expect(!tallies.isEmpty(17) && tallies.isEmpty(16) && tallies.isEmpty(18))
        #expect(tallies[17] == LedgerTally(count: 1, digest: element))
        let group = tallies.slice(16..<32)
        #expect(group.count == 16 && group[1] == tallies[17] && group.matches(1, tallies, 17) && !group.matches(0, tallies, 17))
        #expect(group.matches(0, tallies, 16) && group.matches(15, tallies, 31))
        tallies.count(element, at: 17, inserted: false)
        #expect(tallies == LedgerTallies(count: 40))
    }
}
