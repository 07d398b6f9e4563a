import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

@Suite("Passphrases: set, change, remove, and refusing the wrong one")
struct PassphraseTests {
    let directory = TemporaryDirectory()

    func vault() throws -> Vault { try Vault(directory.vaultConfiguration()) }
    func item(_ account: String, _ accessibility: Accessibility = .whenUnlocked) -> Item {
        Item(.genericPassword, attributes: Attributes(service: "s", account: account, accessibility: accessibility), value: secret("value-\(account)"))
    }
    func read(_ vault: Vault, _ account: String) throws -> String? {
        try vault.copyMatching(Query(.genericPassword, attributes: Attributes(account: account), limit: .one, returnData: true)).first?.value?.string
    }

    @Test("a wrong passphrase is refused with its own error and changes nothing")
    func wrongPassphraseRefused() throws {
        let first = try vault()
        try first.add(item("a"))
        try first.changePassphrase(from: nil, to: secret("right"))
        let header = try rawHeader()
        let vault = try vault()
        #expect(throws: StoreError.wrongPassphrase) { try vault.unlock(passphrase: secret("wrong")) }
        #expect(throws: StoreError.locked) { try read(vault, "a") }
        #expect(throws: StoreError.wrongPassphrase) { try vault.changePassphrase(from: secret("wrong"), to: secret("new")) }
        #expect(try rawHeader() == header)
        try vault.unlock(passphrase: secret("right"))
        #expect(try read(vault, "a") == "value-a")
    }

    @Test("changing the passphrase keeps every item readable with the new one and not the old")
    func changeKeepsItems() throws {
        let vault = try vault()
        try vault.changePassphrase(from: nil, to: secret("old"))
        for (index, accessibility) in Accessibility.allCases.enumerated() {
            try vault.add(item("item\(index)", accessibility))
        }
        try vault.changePassphrase(from: secret("old"), to: secret("new"))
        let reopened = try self.vault()
        #expect(throws: StoreError.wrongPassphrase) { try reopened.unlock(passphrase: secret("old")) }
        try reopened.unlock(passphrase: secret("new"))
        for index in Accessibility.allCases.indices {
            #expect(try read(reopened, "item\(index)") == "value-item\(index)")
        }
    }

    @Test("whenPasscodeSetThisDeviceOnly is refused in a vault without a passphrase")
    func passcodeClassNeedsPassphrase() throws {
        let vault = try vault()
        #expect(throws: StoreError.passphraseRequired) { try vault.add(item("p", .whenPasscodeSetThisDeviceOnly)) }
        #expect(!vault.isAvailable(.whenPasscodeSetThisDeviceOnly))
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(item("p", .whenPasscodeSetThisDeviceOnly))
        #expect(try read(vault, "p") == "value-p")
    }

    @Test("removing the passphrase destroys whenPasscodeSetThisDeviceOnly items and keeps the others")
    func removingPassphraseDestroysPasscodeItems() throws {
        let vault = try vault()
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(item("p", .whenPasscodeSetThisDeviceOnly))
        try vault.add(item("u"))
        try vault.changePassphrase(from: secret("pw"), to: nil)
        let reopened = try self.vault()
        #expect(reopened.status().hasPassphrase == false)
        #expect(try read(reopened, "u") == "value-u")
        #expect(throws: StoreError.itemNotFound) { try read(reopened, "p") }
        #expect(FileManager.default.fileExists(atPath: reopened.location.keyFilePath))
    }

    @Test("setting a passphrase replaces the key file: the vault no longer opens without it")
    func settingPassphraseRemovesKeyFile() throws {
        let vault = try vault()
        try vault.add(item("a"))
        #expect(FileManager.default.fileExists(atPath: vault.location.keyFilePath))
        try vault.changePassphrase(from: nil, to: secret("pw"))
        #expect(!FileManager.default.fileExists(atPath: vault.location.keyFilePath))
        #expect(throws: StoreError.invalidArgument("the new passphrase is empty")) { try vault.changePassphrase(from: secret("pw"), to: SecretBytes([])) }
    }

    func rawHeader() throws -> [UInt8] {
        let connection = try Connection(path: directory.vaultPath(), create: false)
        return try connection.statement(VaultSchema.readHeader).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8] in
            _ = try s.step()
            return s.blob(0)
        }
    }
}
