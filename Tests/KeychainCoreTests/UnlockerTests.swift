import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The one unlocker the library's vault and the command share: which sources it reads, in which
/// order, and when it unlocks at all.
@Suite("Unlocking when needed: a passphrase file, then a systemd credential, never a prompt unasked")
struct UnlockerTests {
    let directory = TemporaryDirectory()

    /// A locked vault with passphrase `pw` and one whenUnlocked item.
    func lockedVault() throws -> Vault {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
        vault.lock()
        return vault
    }

    @Test("the passphrase file unlocks a class that is locked, and only when it is")
    func passphraseFileUnlocks() throws {
        let vault = try lockedVault()
        let unlocker = Unlocker(environment: ["KEYCHAIN_PASSPHRASE_FILE": directory.file("pw", "pw\n")])
        #expect(try unlocker.unlockIfNeeded(vault, for: .whenUnlocked))
        #expect(vault.isAvailable(.whenUnlocked))
        #expect(try !unlocker.unlockIfNeeded(vault, for: .whenUnlocked), "nothing left to unlock: no second scrypt")
    }

    @Test("a systemd credential unlocks when no passphrase file is named; the file wins over it")
    func credentialsDirectory() throws {
        let vault = try lockedVault()
        let credentials = directory.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        _ = FileManager.default.createFile(atPath: credentials + "/keychain-passphrase", contents: Data("pw".utf8), attributes: [.posixPermissions: 0o400])
        #expect(try Unlocker(environment: ["CREDENTIALS_DIRECTORY": credentials]).unlockIfNeeded(vault, for: .whenUnlocked))
        vault.lock()
        let both = Unlocker(environment: ["CREDENTIALS_DIRECTORY": credentials, "KEYCHAIN_PASSPHRASE_FILE": directory.file("wrong", "not pw")])
        #expect(throws: StoreError.wrongPassphrase) { try both.unlockIfNeeded(vault, for: .whenUnlocked) }
    }

    @Test("without a source: a class asked for by name is locked; a listing goes on with what is open")
    func noSource() throws {
        let vault = try lockedVault()
        let unlocker = Unlocker(environment: [:])
        #expect(!unlocker.offersPassphrase)
        #expect(throws: StoreError.locked) { try unlocker.unlockIfNeeded(vault, for: .whenUnlocked) }
        #expect(try !unlocker.unlockIfNeeded(vault, for: nil))
    }

    @Test("a vault without a passphrase is never unlocked and no source is read")
    func noPassphraseVault() throws {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
        let unreadable = Unlocker(environment: ["KEYCHAIN_PASSPHRASE_FILE": directory.path + "/missing"])
        #expect(try !unreadable.unlockIfNeeded(vault, for: .whenUnlocked))
    }
}
