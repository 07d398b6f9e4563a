import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Vaults written by earlier releases (format 1 in `Fixtures/format1`, format 2 in
/// `Fixtures/format2`, each made by its folder's `MakeFixture.swift.txt` on that release) open,
/// are read as they are, and are upgraded to the current format in place at their first write or unlock,
/// nothing lost.
@Suite("Vaults of earlier releases (formats 1 and 2): read as they are, upgraded in place")
struct FormatUpgradeTests {
    let directory = TemporaryDirectory()
    static let passphrase = "fixture-passphrase"
    static func fixtures(_ format: Int) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/format\(format)").path
    }

    /// A private copy of a fixture vault of `format` (mode 0600, owned by whoever runs the tests).
    func copy(_ name: String, format: Int = 1, kernelKeyring: Bool = false) throws -> VaultConfiguration {
        for file in [name + ".keychain", name + ".keychain.key", "machine-id"] {
            let source = Self.fixtures(format) + "/" + file
            guard FileManager.default.fileExists(atPath: source) else { continue }
            let target = directory.path + "/" + file
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: source, toPath: target)
            chmod(target, 0o600)
        }
        return VaultConfiguration(
            location: VaultLocation(path: directory.path + "/\(name).keychain"), idleTimeout: nil,
            scryptParameters: .minimum, usesKernelKeyring: kernelKeyring,
            machineIdentity: MachineIdentity(paths: [directory.path + "/machine-id"]))
    }

    func classes(withPasscode: Bool) -> [Accessibility] {
        Accessibility.allCases.filter { withPasscode || $0 != .whenPasscodeSetThisDeviceOnly }
    }

    func expectEveryItem(_ vault: Vault, withPasscode: Bool) throws {
        for accessibility in classes(withPasscode: withPasscode) {
            let found = try vault.copyMatching(
                Query(
                    .genericPassword, attributes: Attributes(service: "fixture", account: "\(accessibility)"),
                    limit: .one, returnData: true, returnAttributes: true))
            #expect(found.first?.value?.string == "value of \(accessibility)" && found.first?.attributes.accessibility == accessibility)
        }
        let web = try vault.copyMatching(Query(.internetPassword, attributes: Attributes(account: "web", server: "example.org"), limit: .one, returnData: true))
        #expect(web.first?.value?.string == "internet value")
        let empty = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "fixture", account: "empty"), limit: .one, returnData: true))
        #expect(empty.first?.value?.count == 0)
    }

    func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test("a vault of an earlier format is read whole and left byte for byte as it was", arguments: [1, 2])
    func readWithoutWriting(_ format: Int) throws {
        let configuration = try copy("keyfile", format: format)
        let before = fileBytes(configuration.location.path)
        let vault = try Vault(configuration)
        #expect(vault.status().formatVersion == format)
        try expectEveryItem(vault, withPasscode: false)
        #expect(try vault.verify().ledger == (format == 1 ? "none (format 1)" : "ok"))
        #expect(fileBytes(configuration.location.path) == before && vault.status().formatVersion == format)
    }

    @Test("the first write upgrades a format-1 key-file vault in one step: the current format, every item kept, re-sealed and padded, the ledger sound")
    func firstWriteUpgrades() throws {
        let configuration = try copy("keyfile")
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "fixture", account: "new"), value: SecretBytes(utf8: "after")))
        #expect(vault.status().formatVersion == Int(VaultHeader.currentVersion))
        try expectEveryItem(try Vault(configuration), withPasscode: false)
        let report = try Vault(configuration).verify()
        #expect(report.isSound && report.ledger == "ok" && report.damaged.isEmpty && report.intact == report.items, "\(report)")
        let raw = try RawVault(configuration.location.path)
        let generations = try raw.blobs("SELECT generation, value FROM items")
        #expect(generations.allSatisfy { $0.0 >= 1 }, "every item opened here, so every item was re-sealed")
        #expect(generations.allSatisfy { ($0.1.count - 28) % 32 == 0 }, "padded to buckets")
        #expect(
            try Vault(configuration).copyMatching(
                Query(
                    .genericPassword, attributes: Attributes(service: "fixture", account: "new"),
                    limit: .one, returnData: true)
            ).first?.value?.string == "after")
    }

    @Test("unlocking a passphrase vault of an earlier format upgrades it; every class and the presence item survive", arguments: [1, 2])
    func unlockUpgrades(_ format: Int) throws {
        let configuration = try copy("passphrase", format: format)
        let vault = try Vault(configuration)
        #expect(vault.status().formatVersion == format)
        try vault.unlock(passphrase: SecretBytes(utf8: Self.passphrase))
        #expect(vault.status().formatVersion == Int(VaultHeader.currentVersion))
        try expectEveryItem(vault, withPasscode: true)
        let authenticator = ScriptedAuthenticator([.passphrase(Self.passphrase)])
        let presence = try vault.copyMatching(
            Query(
                .genericPassword, attributes: Attributes(service: "fixture", account: "presence"), limit: .one,
                returnData: true, authentication: AuthenticationContext(authenticator: authenticator)))
        #expect(presence.first?.value?.string == "presence value")
        let report = try vault.verify()
        #expect(report.ledger == "ok" && report.damaged.isEmpty, "\(report)")
        guard format == 1 else { return }
        let raw = try RawVault(configuration.location.path)
        #expect(
            try raw.blobs("SELECT generation, value FROM items").filter { $0.0 == 0 }.isEmpty,
            "every row, the presence item included (the unlock has the passphrase that opens its inner seal), is sealed with its generation")
        #expect(report.intact + report.notTried == report.items)
    }

    @Test(
        "a row the upgrade could not re-seal (another machine's ThisDeviceOnly item) is never served as current: an older ciphertext of it put back is refused on its own machine"
    )
    func carriedRowNeverServed() throws {
        let home = try copy("keyfile")
        var elsewhere = home
        elsewhere.machineIdentity = MachineIdentity(paths: [directory.file("other-machine-id", "another machine")])
        // Upgraded on another machine: its ThisDeviceOnly items do not open there, and are carried over as they were.
        try Vault(elsewhere).add(Item(.genericPassword, attributes: Attributes(service: "fixture", account: "new"), value: SecretBytes(utf8: "after")))
        let raw = try RawVault(home.location.path)
        #expect(try !raw.blobs("SELECT generation, value FROM items WHERE generation = 0").isEmpty)

        // An older ciphertext of one of them, as an older copy of the vault would hold it:
        // sealed the format-1 way under the item's class key, for the same row.
        let account = "\(Accessibility.whenUnlockedThisDeviceOnly)"
        let opened = try VaultEngine(home)
        let (rowID, identity, protection) = try #require(
            try raw.connection.statement("SELECT id, identity, protection FROM items WHERE generation = 0 AND protection = ?").with([
                .integer(Int64(Accessibility.whenUnlockedThisDeviceOnly.code))
            ]) { (s: Statement) throws(SQLiteError) in try s.step() ? (s.integer(0), s.blob(1), UInt8(s.integer(2))) : nil })
        let older = try opened.inUse { (state) throws(StoreError) -> [UInt8] in
            let key = try state.classKey(.whenUnlockedThisDeviceOnly, create: false)
            let aad = RecordCoding.itemAssociatedData(
                vaultID: state.header.vaultID, identity: identity, itemClass: .genericPassword, protection: protection, part: .value, generation: 0)
            return try VaultState.crypto { () throws(OpenSSLError) in try key.seal(SecretBytes(utf8: "older value"), associatedData: aad) }
        }
        try raw.set("UPDATE items SET value = ? WHERE id = ?", older, rowID)

        let vault = try Vault(home)
        let read = Result { try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "fixture", account: account), limit: .one, returnData: true)) }
        #expect(throws: StoreError.self, "a carried-over row is refused, whatever its ciphertext") { try read.get() }
        let report = try vault.verify()
        #expect(report.damaged.map(\.row).contains(rowID) && !report.isSound, "verify names it: \(report)")
        #expect(throws: StoreError.self, "an update that keeps its value would make the older value current") {
            try vault.write([.update(Query(.genericPassword, attributes: Attributes(service: "fixture", account: account)), attributes: Attributes(label: "x"), value: nil)])
        }
    }

    @Test("the mark that spares an unlock the search for carried-over rows is there only once none is left")
    func noCarriedRowsMark() throws {
        let home = try copy("passphrase")
        var elsewhere = home
        elsewhere.machineIdentity = MachineIdentity(paths: [directory.file("other-machine-id", "another machine")])
        try Vault(elsewhere).unlock(passphrase: SecretBytes(utf8: Self.passphrase))
        let raw = try RawVault(home.location.path)
        func marked() throws -> Bool { try !raw.blobs("SELECT 0, value FROM meta WHERE name = 'carried/none'").isEmpty }
        func carried() throws -> Int { try raw.blobs("SELECT id, value FROM items WHERE generation = 0").count }
        #expect(try carried() > 0 && !marked(), "another machine's ThisDeviceOnly items are carried over, and the vault says so")
        let back = try Vault(home)
        try back.unlock(passphrase: SecretBytes(utf8: Self.passphrase))
        #expect(try carried() == 0 && marked(), "re-sealed by an unlock where they open, and marked")
        try expectEveryItem(back, withPasscode: true)

        let fresh = directory.vaultConfiguration(name: "fresh.keychain")
        try Vault(fresh).add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: SecretBytes(utf8: "v")))
        #expect(try !RawVault(fresh.location.path).blobs("SELECT 0, value FROM meta WHERE name = 'carried/none'").isEmpty, "a new vault is marked")
    }

    @Test("a locked format-1 passphrase vault is not written before its unlock upgrades it")
    func lockedWriteWaitsForUnlock() throws {
        let configuration = try copy("passphrase")
        let before = fileBytes(configuration.location.path)
        #expect(throws: StoreError.locked) {
            try Vault(configuration).add(Item(.genericPassword, attributes: Attributes(service: "fixture", account: "x"), value: SecretBytes(utf8: "x")))
        }
        #expect(fileBytes(configuration.location.path) == before)
    }

    @Test(
        "an upgrade carries a damaged row over as it was; verify still names it",
        arguments: ["value"])
    func damagedRowCarried(_ column: String) throws {
        let configuration = try copy("keyfile")
        let raw = try RawVault(configuration.location.path)
        let target = try raw.blobs("SELECT id, \(column) FROM items ORDER BY id")[0]
        try raw.set("UPDATE items SET \(column) = ? WHERE id = ?", raw.flip(target.1, at: 14), target.0)
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "fixture", account: "new"), value: SecretBytes(utf8: "after")))
        let report = try Vault(configuration).verify()
        #expect(vault.status().formatVersion == Int(VaultHeader.currentVersion) && report.ledger == "ok" && report.damaged.map(\.row) == [target.0], "\(report)")
    }

    @Test(
        "a format-1 copy of a vault this boot has seen at format 2 is refused as a rollback",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func downgradeRefused() throws {
        let configuration = try copy("keyfile", kernelKeyring: true)
        // The fixture's vault id is shared by every run: start from, and leave, no record of it.
        let opened = try VaultEngine(configuration)
        opened.locked { $0.forgetGeneration() }
        defer { opened.locked { $0.forgetGeneration() } }
        try Vault(configuration).add(Item(.genericPassword, attributes: Attributes(service: "fixture", account: "new"), value: SecretBytes(utf8: "after")))
        for suffix in ["-wal", "-shm"] { unlink(configuration.location.path + suffix) }
        _ = try copy("keyfile", kernelKeyring: true)
        #expect {
            try Vault(configuration).copyMatching(Query(.genericPassword, attributes: Attributes(service: "fixture"), returnData: true))
        } throws: { error in
            guard case .tampered(let reason) = error as? StoreError else { return false }
            return reason.contains("rolled back")
        }
    }

    /// Every row as stored: id, class, protection, identity, scope, sealed attributes, sealed value, generation.
    func storedRows(_ raw: RawVault) throws -> [[[UInt8]]] {
        var rows: [[[UInt8]]] = []
        try raw.connection.statement("SELECT id, class, protection, identity, scope, attributes, value, generation FROM items ORDER BY id").with([]) {
            (s: Statement) throws(SQLiteError) in
            while try s.step() { rows.append((0..<8).map { s.blob(Int32($0)) }) }
        }
        return rows
    }

    @Test("the first write upgrades a format-2 key-file vault: its rows untouched, its ledger sharded at the next generation, every item kept")
    func formatTwoFirstWriteUpgrades() throws {
        let configuration = try copy("keyfile", format: 2)
        let raw = try RawVault(configuration.location.path)
        let rowsBefore = try storedRows(raw)
        let ledgerBefore = try raw.blobs("SELECT 0, value FROM meta WHERE name = 'ledger'")[0].1
        try Vault(configuration).add(Item(.genericPassword, attributes: Attributes(service: "fixture", account: "new"), value: SecretBytes(utf8: "after")))
        let vault = try Vault(configuration)
        #expect(vault.status().formatVersion == Int(VaultHeader.currentVersion))
        #expect(Array(try storedRows(raw).prefix(rowsBefore.count)) == rowsBefore, "the upgrade re-seals nothing")
        let root = try raw.blobs("SELECT 0, value FROM meta WHERE name = 'ledger'")[0].1
        // The upgrade took the next generation, and the write the one after it.
        #expect(root.count == LedgerRoot.encodedSize(groups: LedgerShards.scopedGroupCount) && ItemLedger.integer(root, at: 0) == ItemLedger.integer(ledgerBefore, at: 0) + 2)
        let groupsHoldingRows = Set(
            try storedRows(raw).flatMap { [LedgerShards.group(of: LedgerShards.shard(of: $0[3])), LedgerShards.group(of: LedgerShards.scopeShard(of: $0[4]))] })
        #expect(try raw.blobs("SELECT 0, value FROM meta WHERE name LIKE 'ledger/%'").count == groupsHoldingRows.count, "one record per group that holds rows")
        try expectEveryItem(vault, withPasscode: false)
        let report = try vault.verify()
        #expect(report.isSound && report.ledger == "ok" && report.intact == report.items, "\(report)")
    }

    @Test("a vault opened at format 2 reads on after another process upgraded it to the current format")
    func openedBeforeAnotherProcessUpgraded() throws {
        let configuration = try copy("keyfile", format: 2)
        let vault = try Vault(configuration)
        #expect(vault.status().formatVersion == 2)
        let command = try KeychainExecutable.run(
            ["set", "--vault", configuration.location.path, "--service", "fixture", "new"], input: Data("after".utf8), home: directory.path)
        #expect(command.status == 0, "\(command.stderr)")
        try expectEveryItem(vault, withPasscode: false)
        #expect(vault.status().formatVersion == Int(VaultHeader.currentVersion))
    }
}
