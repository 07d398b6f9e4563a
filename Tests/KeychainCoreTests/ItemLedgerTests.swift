import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The whole vault is authenticated (vault-format issue, findings 4 and 9): which rows exist and
/// in which version, and a file rolled back within a boot.
@Suite("The item ledger: deleted, older and rolled-back rows are tampering, never served")
struct ItemLedgerTests {
    let directory = TemporaryDirectory()

    func item(_ account: String, _ value: String) -> Item { genericPassword(account, value) }

    func read(_ vault: Vault, _ account: String) throws(StoreError) -> String? { try genericPasswordValue(vault, account) }

    /// Every column of row `id`, as an attacker with an older copy of the file has them.
    func savedRow(_ raw: RawVault, _ id: Int64) throws -> [Statement.Value] {
        var values: [Statement.Value] = []
        try raw.connection.statement("SELECT id, class, protection, identity, scope, attributes, value, generation FROM items WHERE id = ?")
            .with([.integer(id)]) { (s: Statement) throws(SQLiteError) in
                _ = try s.step()
                values = [
                    .integer(s.integer(0)), .integer(s.integer(1)), .integer(s.integer(2)), .blob(s.blob(3)), .blob(s.blob(4)),
                    .blob(s.blob(5)), .blob(s.blob(6)), .integer(s.integer(7)),
                ]
            }
        return values
    }

    func putBack(_ raw: RawVault, _ row: [Statement.Value]) throws {
        try raw.connection.statement("INSERT OR REPLACE INTO items(id, class, protection, identity, scope, attributes, value, generation) VALUES(?, ?, ?, ?, ?, ?, ?, ?)").run(row)
    }

    func ids(_ raw: RawVault) throws -> [Int64] {
        try raw.blobs("SELECT id, identity FROM items ORDER BY id").map(\.0)
    }

    /// A vault holding `a` and `b` in service `s`, and the file as `sqlite3` sees it.
    func twoItems(_ a: String = "1", _ b: String = "2") throws -> (VaultConfiguration, Vault, RawVault) {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        try vault.add(item("a", a))
        try vault.add(item("b", b))
        return (configuration, vault, try RawVault(configuration.location.path))
    }

    @Test("a row restored from an older copy (a revoked token) is refused, in the library and the command")
    func olderRowRefused() throws {
        let (configuration, vault, raw) = try twoItems("revoked-token", "other")
        let old = try savedRow(raw, try ids(raw)[0])
        try vault.upsert(item("a", "current-token"))
        try putBack(raw, old)
        expectTampered({ _ = try read(try Vault(configuration), "a") }, "the older row")
        expectTampered(
            { _ = try Vault(configuration).copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))) }, "a listing that meets the older row")
        expectTampered({ _ = try read(vault, "a") }, "a vault open while the file changed checks it again")
        let command = try KeychainExecutable.run(["get", "--vault", configuration.location.path, "--service", "s", "a"], home: directory.path)
        #expect(command.status == 4 && command.stderr.contains("ledger") && !command.output.contains("revoked-token"), "\(command.stderr)")
    }

    @Test("a deleted row is tampering, not a missing item")
    func deletedRowRefused() throws {
        let (configuration, _, raw) = try twoItems()
        try raw.connection.execute("DELETE FROM items WHERE id = \(try ids(raw)[0])")
        expectTampered({ _ = try read(try Vault(configuration), "a") }, "the deleted row")
        expectTampered({ _ = try Vault(configuration).contains(Query(.genericPassword, attributes: Attributes(service: "s", account: "a"))) }, "contains")
    }

    @Test("an item deleted through the vault and put back from an older copy is refused")
    func restoredDeletedRowRefused() throws {
        let (configuration, vault, raw) = try twoItems("deleted-secret", "2")
        let old = try savedRow(raw, try ids(raw)[0])
        #expect(try vault.delete(Query(.genericPassword, attributes: Attributes(service: "s", account: "a"))) == 1)
        try putBack(raw, old)
        expectTampered({ _ = try read(try Vault(configuration), "a") }, "the restored row")
    }

    @Test("an older attributes blob beside the newer value does not open, and the other items still read")
    func olderAttributesBesideNewerValue() throws {
        let (configuration, vault, raw) = try twoItems()
        let id = try ids(raw)[0]
        let oldAttributes = try raw.blobs("SELECT id, attributes FROM items WHERE id = \(id)")[0].1
        try vault.upsert(item("a", "newer"))
        try raw.set("UPDATE items SET attributes = ? WHERE id = ?", oldAttributes, id)
        let reopened = try Vault(configuration)
        expectTampered(
            { _ = try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "a"))) },
            "the mixed row's attributes")
        #expect(try read(reopened, "b") == "2")
    }

    @Test("a write that meets rows the ledger does not vouch for writes nothing (writes beside them: LedgerShardWriteTests)")
    func writeRefusedOnFailedLedger() throws {
        let configuration = directory.vaultConfiguration()
        try Vault(configuration).add(item("a", "1"))
        try Vault(configuration).add(item("b", "2"))
        let raw = try RawVault(configuration.location.path)
        try raw.connection.execute("DELETE FROM items WHERE id = \(try ids(raw)[0])")
        let before = try raw.blobs("SELECT id, value FROM items ORDER BY id").map(\.1)
        expectTampered({ try Vault(configuration).upsert(item("a", "again")) }, "the deleted item written again")
        expectTampered({ _ = try Vault(configuration).delete(Query(.genericPassword)) }, "the delete")
        #expect(try raw.blobs("SELECT id, value FROM items ORDER BY id").map(\.1) == before)
    }

    @Test("verify names a failed ledger, and recover saves every item that opens")
    func verifyAndRecoverAfterLedgerFailure() throws {
        let (configuration, _, raw) = try twoItems()
        try raw.connection.execute("DELETE FROM items WHERE id = \(try ids(raw)[0])")
        let report = try Vault(configuration).verify()
        #expect(!report.isSound && report.ledger.contains("not the set") && report.intact == 1, "\(report)")
        let command = try KeychainExecutable.run(["verify", "--vault", configuration.location.path], home: directory.path)
        #expect(command.status == 4 && command.output.contains("ledger:") && command.output.contains("not the set"), "\(command.output)")
        let rescued = directory.path + "/rescued.keychain"
        let recovered = try Vault(configuration).recover(to: rescued, passphrase: nil)
        #expect(recovered.copied == 1 && recovered.leftBehind == 0)
        let saved = try Vault(VaultConfiguration(location: VaultLocation(path: rescued), usesKernelKeyring: false))
        #expect(try read(saved, "b") == "2" && saved.verify().isSound)
    }

    @Test("values and attributes are padded: a ciphertext's length tells only a size bucket")
    func padded() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        for (account, length) in [("a", 1), ("bb", 12), ("ccc", 31), ("d", 32), ("e", 0)] {
            try vault.add(item(account, String(repeating: "x", count: length)))
        }
        let raw = try RawVault(configuration.location.path)
        let values = try raw.blobs("SELECT id, value FROM items ORDER BY id").map(\.1.count)
        #expect(values == [60, 60, 60, 92, 60], "32- and 64-byte buckets plus nonce and tag")
        let attributes = Set(try raw.blobs("SELECT id, attributes FROM items ORDER BY id").map(\.1.count))
        #expect(attributes.count == 1, "attributes of different lengths share a bucket: \(attributes)")
        #expect(try read(vault, "d") == String(repeating: "x", count: 32) && read(vault, "e") == "")
    }

    @Test("the padding: every length round-trips, buckets grow by powers of two, then by 16 KiB")
    func paddingBuckets() {
        #expect([0, 31, 32, 63, 64, 16_383, 16_384, 40_000].map(SizePadding.bucket(for:)) == [32, 32, 64, 64, 128, 16_384, 32_768, 49_152])
        for length in [0, 1, 31, 32, 33, 100, 16_384] {
            let bytes = SecretBytes((0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 0x80) })
            let padded = bytes.withUnsafeBytes { SizePadding.pad($0) }
            #expect(SizePadding.unpad(padded) == bytes)
        }
        #expect(SizePadding.unpad(SecretBytes([1, 2, 0, 0])) == nil, "no 0x80 marker")
    }

    @Test(
        "the whole file rolled back to an older copy is refused while this boot remembers the newer one; a restore is accepted",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func wholeFileRollback() throws {
        let configuration = directory.vaultConfiguration(kernelKeyring: true)
        try rollBack(configuration, account: "a", older: "revoked-token", current: "current-token", scratch: directory.path)
        let path = configuration.location.path, backup = directory.path + "/older.keychain"
        expectTampered({ _ = try read(try Vault(configuration), "a") }, "the rolled-back file")
        let report = try Vault(configuration).verify()
        #expect(report.ledger.contains("rolled back"), "\(report.ledger)")

        // Putting the copy back on purpose is a restore.
        #expect(rename(path, backup) == 0 && rename(path + ".key", backup + ".key") == 0)
        try Vault(configuration).restore(from: backup)
        #expect(try read(try Vault(configuration), "a") == "revoked-token")
    }

    @Test(
        "a generation record planted in the kernel keyring is ignored: it neither blocks nor vouches",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func plantedGenerationIgnored() throws {
        let configuration = directory.vaultConfiguration(kernelKeyring: true)
        let vault = try Vault(configuration)
        try vault.add(item("a", "1"))
        let opened = try VaultEngine(configuration)
        defer { opened.locked { $0.forgetGeneration() } }
        let raw = try RawVault(configuration.location.path)
        let vaultID = Array(try raw.blobs("SELECT 0, value FROM meta WHERE name = 'header'")[0].1[6..<22])
        // An entry claiming a far newer generation, with a tag its planter could not compute.
        let forged = GenerationTable.recordID(vaultID: vaultID, path: configuration.location.path) + [UInt8](repeating: 0xFF, count: 8) + Random.bytes(32)
        VaultState.updateGenerationTable(KernelKeyring()) { table in SecretBytes(GenerationTable.entries(table).joined() + forged) }
        #expect(try read(try Vault(configuration), "a") == "1")
        try Vault(configuration).add(item("b", "2"))
        #expect(try read(try Vault(configuration), "b") == "2")
    }

    @Test("the generation table keeps the newest entry per vault, the most recent 64 vaults, and drops what does not parse")
    func generationTable() {
        let key = HMACKey(SecretBytes.random(count: 32))
        var table: SecretBytes?
        for index in 0..<70 { table = GenerationTable.recording(UInt64(index), in: table, key: key, recordID: [UInt8](repeating: UInt8(index), count: 16)) }
        table = GenerationTable.recording(99, in: table, key: key, recordID: [UInt8](repeating: 10, count: 16))
        #expect(GenerationTable.entries(table).count == 64)
        #expect(GenerationTable.generation(in: table, key: key, recordID: [UInt8](repeating: 10, count: 16)) == 99)
        #expect(GenerationTable.generation(in: table, key: key, recordID: [UInt8](repeating: 69, count: 16)) == 69)
        #expect(GenerationTable.generation(in: table, key: key, recordID: [UInt8](repeating: 3, count: 16)) == nil, "the oldest went")
        #expect(GenerationTable.generation(in: table, key: HMACKey(SecretBytes.random(count: 32)), recordID: [UInt8](repeating: 69, count: 16)) == nil)
        #expect(GenerationTable.entries(SecretBytes([1, 2, 3])).isEmpty)
        #expect(
            GenerationTable.generation(
                in: GenerationTable.forgetting([UInt8](repeating: 69, count: 16), in: table), key: key,
                recordID: [UInt8](repeating: 69, count: 16)) == nil)
    }
}
