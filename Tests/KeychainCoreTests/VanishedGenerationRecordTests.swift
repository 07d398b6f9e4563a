import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// A vault last written in this boot whose generation record vanished from the kernel keyring
/// (no-silent-success issue, item 3): its freshness is unknown, not fresh. Reads go on, writes
/// wait for the owner's confirmation; after a reboot the record's absence stays normal.
@Suite(
    "A vanished generation record: unknown, not fresh",
    .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
struct VanishedGenerationRecordTests {
    let directory = TemporaryDirectory()

    func item(_ account: String, _ value: String) -> Item { genericPassword(account, value) }

    func read(_ vault: Vault, _ account: String) throws(StoreError) -> String? { try genericPasswordValue(vault, account) }

    /// A configuration whose process believes it runs in the boot named `boot`.
    func configuration(boot: String = "this boot", passphrase: Bool = false) -> VaultConfiguration {
        var configuration = directory.vaultConfiguration(kernelKeyring: true)
        let file = directory.path + "/boot-id-" + boot.replacingOccurrences(of: " ", with: "-")
        _ = FileManager.default.createFile(atPath: file, contents: Data(boot.utf8))
        configuration.bootIdentity = BootIdentity(path: file)
        return configuration
    }

    /// The error `body` throws, nil when it succeeds.
    func failure(_ body: () throws(StoreError) -> Void) -> StoreError? {
        do { try body() } catch { return error }
        return nil
    }

    func forgetRecord(_ configuration: VaultConfiguration) throws {
        try VaultEngine(configuration).locked { $0.forgetGeneration() }
    }

    @Test("a rolled-back copy whose record was deleted is served no write: status and verify say unknown until the owner accepts it")
    func rolledBackCopyWithDeletedRecord() throws {
        let configuration = configuration()
        defer { try? forgetRecord(configuration) }
        try rollBack(configuration, account: "token", older: "revoked", current: "current", scratch: directory.path)
        // The rollback is refused while this boot's record stands; the attacker deletes it.
        #expect(throws: StoreError.self) { _ = try read(try Vault(configuration), "token") }
        try forgetRecord(configuration)

        let reopened = try Vault(configuration)
        #expect(reopened.status().rollbackCheck == .unknown)
        #expect(try reopened.verify().rollbackCheck == .unknown)
        let refusal = failure { () throws(StoreError) in try reopened.upsert(item("token", "written over the rollback")) }
        #expect(refusal?.description.contains("verify --accept") == true, "\(String(describing: refusal))")
        #expect(try read(reopened, "token") == "revoked", "reads go on; nothing was written")

        try reopened.acceptCurrentGeneration()
        #expect(reopened.status().rollbackCheck == .current)
        try reopened.upsert(item("token", "after the owner's word"))
        #expect(try read(try Vault(configuration), "token") == "after the owner's word")
    }

    @Test("another process's writes wait too, and go on once the owner accepted the vault elsewhere")
    func otherProcessSeesTheAcceptance() throws {
        let configuration = configuration()
        defer { try? forgetRecord(configuration) }
        try Vault(configuration).add(item("a", "1"))
        try forgetRecord(configuration)
        let writer = try Vault(configuration)
        #expect(throws: StoreError.self) { try writer.add(item("b", "2")) }
        try Vault(configuration).acceptCurrentGeneration()
        try writer.add(item("b", "2"))
        #expect(try read(writer, "b") == "2")
    }

    @Test("after a reboot no record is normal: the vault reads and writes, and says it has no record this boot")
    func noRecordAfterRebootIsNormal() throws {
        let before = configuration(boot: "boot A")
        try Vault(before).add(item("a", "1"))
        try forgetRecord(before)
        let after = configuration(boot: "boot B")
        defer { try? forgetRecord(after) }
        let vault = try Vault(after)
        #expect(vault.status().rollbackCheck == .noRecordThisBoot)
        try vault.add(item("b", "2"))
        #expect(vault.status().rollbackCheck == .current)
    }

    @Test("only the master key accepts: keys another process left in the kernel keyring do not; the passphrase does")
    func acceptanceTakesThePassphrase() throws {
        let configuration = configuration()
        defer { try? forgetRecord(configuration) }
        let owner = try Vault(configuration)
        try owner.changePassphrase(from: nil, to: SecretBytes(utf8: "pw"))
        try owner.unlock(passphrase: SecretBytes(utf8: "pw"))
        try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessibility: .afterFirstUnlock), value: SecretBytes(utf8: "1")))
        try forgetRecord(configuration)
        let other = try Vault(configuration)
        #expect(try read(other, "a") == "1", "afterFirstUnlock keys from the kernel keyring read")
        #expect(throws: StoreError.locked) { try other.acceptCurrentGeneration() }
        try other.unlock(passphrase: SecretBytes(utf8: "pw"))
        try other.acceptCurrentGeneration()
        try other.add(item("b", "2"))
    }

    @Test("a vault whose ledger root predates the boot stamp reads and takes writes, as one written in no known boot")
    func rootWithoutBootStillReads() throws {
        let configuration = configuration()
        defer { try? forgetRecord(configuration) }
        try Vault(configuration).add(item("a", "1"))
        // The root as 0.6 wrote it: generation and groups, no boot, under the old label.
        let opened = try VaultEngine(configuration)
        let key = try opened.inUse { (state) throws(StoreError) in try state.ledgerKey() }
        let vaultID = opened.vaultID
        let raw = try RawVault(configuration.location.path)
        let stored = try raw.blobs("SELECT 0, value FROM meta WHERE name = 'ledger'")[0].1
        let bodySize = 8 + 8 * LedgerShards.groupCount(format: VaultHeader.currentVersion)
        let bootless = TaggedRecord.seal(Array(stored[0..<bodySize]), context: Array("swift-keychain ledger root v3".utf8) + vaultID, key: key)
        try withExtendedLifetime(raw) { try raw.connection.statement("UPDATE meta SET value = ? WHERE name = 'ledger'").run([.blob(bootless)]) }
        try forgetRecord(configuration)
        let vault = try Vault(configuration)
        #expect(try read(vault, "a") == "1")
        #expect(vault.status().rollbackCheck == .noRecordThisBoot)
        try vault.add(item("b", "2"))
        #expect(try vault.verify().isSound)
    }
}
