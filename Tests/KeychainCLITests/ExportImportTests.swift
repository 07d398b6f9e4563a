import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Moving secrets in and out: an encrypted archive, a merge with a stated conflict rule, and a
/// move between stores, each all or nothing.
@Suite("Export, import and migrate")
struct ExportImportTests {
    static let generic = Attributes(
        service: "svc", account: "acct", accessGroup: "group.x", synchronizable: false,
        accessibility: .afterFirstUnlock, label: "A label", comment: "A comment", description: "A description",
        generic: Data([0, 1, 2, 255]), creator: 0x6162_6364, type: 0x7778_797A, isInvisible: true, isNegative: false)
    static let internet = Attributes(
        account: "alice", accessGroup: "", synchronizable: true, server: "example.com", protocol: .https,
        authenticationType: .htmlForm, port: 8443, path: "/login", securityDomain: "realm",
        accessibility: .whenUnlocked, label: "site", comment: "c", description: "d", generic: Data("g".utf8),
        creator: 1, type: 2, isInvisible: false, isNegative: true)

    let directory = TemporaryDirectory()

    func populate(_ store: any Store) throws {
        try store.add(Item(.genericPassword, attributes: Self.generic, value: SecretBytes([0, 0xFF, 7])))
        try store.add(Item(.internetPassword, attributes: Self.internet, value: SecretBytes(utf8: "web")))
    }

    /// The two items of `store`, attributes without the store's dates, by class.
    func snapshot(_ store: any Store) throws -> [String: (Attributes, [UInt8])] {
        var result: [String: (Attributes, [UInt8])] = [:]
        for item in try ItemTransfer.transferableItems(of: store).items {
            result[item.itemClass.rawValue] = (item.attributes.normalizedIdentity(for: item.itemClass), item.value!.withUnsafeBytes { Array($0) })
        }
        return result
    }

    func expectSame(_ a: [String: (Attributes, [UInt8])], _ b: [String: (Attributes, [UInt8])], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.keys.sorted() == ["genp", "inet"] && a.keys.sorted() == b.keys.sorted(), sourceLocation: sourceLocation)
        for key in a.keys {
            #expect(a[key]?.0 == b[key]?.0 && a[key]?.1 == b[key]?.1, "\(key): every attribute and the value", sourceLocation: sourceLocation)
        }
    }

    @Test("an archive round-trips every attribute of both classes between two vaults; the command leaves ThisDeviceOnly and presence items behind and says so")
    func archiveRoundTrip() throws {
        // The machine's own identity, as the command uses: the ThisDeviceOnly item opens for both.
        let source = try Vault(
            VaultConfiguration(
                location: VaultLocation(path: directory.vaultPath("source.keychain")), scryptParameters: .minimum,
                usesKernelKeyring: false))
        try populate(source)
        try source.add(Item(.genericPassword, attributes: Attributes(service: "local", account: "a", accessibility: .whenUnlockedThisDeviceOnly), value: secret("stays")))
        let archive = try ItemArchive.seal(try ItemTransfer.transferableItems(of: source).items, passphrase: secret("archive pw"), parameters: .minimum)
        let destination = try Vault(directory.vaultConfiguration(name: "destination.keychain"))
        try ItemTransfer.merge(try ItemArchive.open(archive, passphrase: secret("archive pw")), into: destination, rule: .refuse)
        expectSame(try snapshot(source), try snapshot(destination))

        let file = directory.path + "/export.skcx"
        let pw = directory.file("archive-pw", "archive pw")
        let exported = try KeychainExecutable.run(
            ["export", "--vault", directory.vaultPath("source.keychain"), file],
            environment: ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": pw], home: directory.path)
        #expect(exported.status == 0 && exported.stderr.contains("exported 2 item(s)") && exported.stderr.contains("1 ThisDeviceOnly"), "\(exported.stderr)")
        let again = try KeychainExecutable.run(
            ["export", "--vault", directory.vaultPath("source.keychain"), file],
            environment: ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": pw], home: directory.path)
        #expect(again.status == 2 && again.stderr.contains("never writes over"), "\(again.stderr)")
        let imported = try KeychainExecutable.run(
            ["import", "--vault", directory.vaultPath("third.keychain"), file],
            environment: ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": pw], home: directory.path)
        #expect(imported.status == 0 && imported.stderr.contains("2 added"), "\(imported.stderr)")
        expectSame(try snapshot(source), try snapshot(try Vault(directory.vaultConfiguration(name: "third.keychain"))))
    }

    @Test("a flipped byte, a cut archive or the wrong passphrase is refused and changes nothing")
    func damagedArchiveChangesNothing() throws {
        let source = try Vault(directory.vaultConfiguration(name: "source.keychain"))
        try populate(source)
        let archive = try ItemArchive.seal(try ItemTransfer.transferableItems(of: source).items, passphrase: secret("pw"), parameters: .minimum)
        let destination = try Vault(directory.vaultConfiguration(name: "destination.keychain"))
        try destination.add(Item(.genericPassword, attributes: Attributes(service: "mine", account: "m"), value: secret("kept")))
        var flipped = archive
        flipped[flipped.count / 2] ^= 0x01
        for (name, bytes, passphrase) in [
            ("flipped", flipped, "pw"), ("cut", Array(archive.prefix(archive.count - 5)), "pw"),
            ("header only", Array(archive.prefix(40)), "pw"), ("wrong passphrase", archive, "nope"),
        ] {
            #expect(throws: StoreError.self, "\(name)") { try ItemTransfer.merge(try ItemArchive.open(bytes, passphrase: secret(passphrase)), into: destination, rule: .replace) }
        }
        let left = try destination.copyMatching(Query(returnData: true))
        #expect(left.count == 1 && left.first?.value?.string == "kept")
    }

    @Test("conflict rules: refuse changes nothing, keep keeps the existing item, replace takes the archive's")
    func conflictRules() throws {
        let destination = try Vault(directory.vaultConfiguration())
        try destination.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("old")))
        let incoming = [
            Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("new")),
            Item(.genericPassword, attributes: Attributes(service: "s", account: "b"), value: secret("b")),
        ]
        func value(_ account: String) -> String? {
            try? destination.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: account), returnData: true)).first?.value?.string
        }
        #expect(throws: StoreError.duplicateItem) { try ItemTransfer.merge(incoming, into: destination, rule: .refuse) }
        #expect(value("a") == "old" && value("b") == nil, "refuse changed nothing")
        #expect(try ItemTransfer.merge(incoming, into: destination, rule: .keep) == ItemTransfer.Outcome(added: 1, replaced: 0, kept: 1))
        #expect(value("a") == "old" && value("b") == "b")
        #expect(try ItemTransfer.merge(incoming, into: destination, rule: .replace).replaced == 2)
        #expect(value("a") == "new")
    }

    @Test(
        "migrate moves every attribute from the vault to the Secret Service and back",
        .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
    func migrateBetweenStores() throws {
        let vault = try TestStore(.vault)
        let desktop = try TestStore(.secretService)
        try populate(vault.store)
        let before = try snapshot(vault.store)
        let there = try KeychainExecutable.run(
            ["migrate", "--vault", vault.directory.vaultPath(), "--from", "vault", "--to", "secret-service"],
            environment: desktop.commandEnvironment, home: directory.path)
        #expect(there.status == 0 && there.stderr.contains("2 added"), "\(there.stderr)")
        expectSame(before, try snapshot(desktop.store))
        #expect(throws: StoreError.itemNotFound, "moved, not copied") { try vault.store.copyMatching(Query()) }
        let back = try KeychainExecutable.run(
            ["migrate", "--vault", vault.directory.vaultPath(), "--from", "secret-service", "--to", "vault"],
            environment: desktop.commandEnvironment, home: directory.path)
        #expect(back.status == 0, "\(back.stderr)")
        expectSame(before, try snapshot(vault.store))
        #expect(throws: StoreError.itemNotFound) { try desktop.store.copyMatching(Query()) }
    }
}
