import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Keys rotate (vault-format issue, finding 5): after a rekey, or a key-file vault's first
/// passphrase, old keys open nothing written later, and every item still opens with the new.
@Suite("Key rotation")
struct RekeyTests {
    let directory = TemporaryDirectory()
    var path: String { directory.vaultPath() }

    func header(_ path: String) throws -> [UInt8] {
        try RawVault(path).blobs("SELECT 0, value FROM meta WHERE name = 'header'")[0].1
    }

    func putBack(_ header: [UInt8], into path: String) throws {
        let raw = try RawVault(path)
        try withExtendedLifetime(raw) { try raw.connection.statement("UPDATE meta SET value = ? WHERE name = 'header'").run([.blob(header)]) }
    }

    func value(_ vault: Vault, _ account: String) throws -> String? {
        try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: account), limit: .one, returnData: true)).first?.value?.string
    }

    @Test("a key file copied before the first passphrase, with the old header, opens nothing written after; the old key file is zeroed before it is removed")
    func firstPassphraseRotates() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "old", accessibility: .afterFirstUnlock), value: secret("before")))
        let oldKey = try Data(contentsOf: URL(fileURLWithPath: configuration.location.keyFilePath))
        let oldHeader = try header(path)
        let hardLink = directory.path + "/key-hard-link"
        #expect(link(configuration.location.keyFilePath, hardLink) == 0)
        try vault.changePassphrase(from: nil, to: secret("pw"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: hardLink)) == Data(repeating: 0, count: 32), "overwritten before it was unlinked")
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "new", accessibility: .afterFirstUnlock), value: secret("after")))
        #expect(try value(vault, "old") == "before" && value(vault, "new") == "after", "every item opens with the new keys")

        // The attacker's copy: the old header and the old key file, with today's rows.
        try putBack(oldHeader, into: path)
        #expect(FileManager.default.createFile(atPath: configuration.location.keyFilePath, contents: oldKey, attributes: [.posixPermissions: 0o600]))
        let stale = try Vault(configuration)
        #expect(throws: StoreError.self) { _ = try value(stale, "new") }
        #expect(throws: StoreError.self) { _ = try value(stale, "old") }
    }

    @Test(
        "after a rekey, the old header opened with the passphrase opens nothing; items, presence items included, still open; a process holding the retired keys is locked, never sealing with them"
    )
    func rekeyRotates() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessibility: .whenUnlocked), value: secret("alpha")))
        try vault.add(
            Item(
                .genericPassword, attributes: Attributes(service: "s", account: "p", accessibility: .whenPasscodeSetThisDeviceOnly, accessControl: .userPresence),
                value: secret("pin")))
        let other = try Vault(configuration)
        try other.unlock(passphrase: secret("pw"))
        #expect(try value(other, "a") == "alpha")
        let oldHeader = try header(path)
        #expect(throws: StoreError.wrongPassphrase) { try vault.rekey(passphrase: secret("nope")) }
        try vault.rekey(passphrase: secret("pw"))
        #expect(try header(path) != oldHeader)
        #expect(try value(vault, "a") == "alpha")
        let authenticator = ScriptedAuthenticator([.passphrase("pw")])
        let presence = try vault.copyMatching(
            Query(
                .genericPassword, attributes: Attributes(account: "p"), limit: .one, returnData: true,
                authentication: AuthenticationContext(authenticator: authenticator)))
        #expect(presence.first?.value?.string == "pin", "the presence item was re-sealed too")

        #expect(throws: StoreError.locked) { try other.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "stale"), value: secret("x"))) }
        #expect(throws: StoreError.locked) { _ = try value(other, "a") }
        try other.unlock(passphrase: secret("pw"))
        #expect(try value(other, "a") == "alpha", "unlocked again, it reads")

        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "later"), value: secret("later")))
        try putBack(oldHeader, into: path)
        let stale = try Vault(configuration)
        #expect(throws: StoreError.self, "the retired master key unwraps none of the new class keys") {
            try stale.unlock(passphrase: secret("pw"))
            _ = try value(stale, "later")
        }
    }

    @Test(
        "a process whose unlock read the header just before another process's rekey never records its retired key checks over the new ones: the rekeying process writes on, the stale one is locked, nothing is taken for tampering"
    )
    func staleUnlockKeepsNewKeyChecks() throws {
        let configuration = directory.vaultConfiguration()
        let owner = try Vault(configuration)
        try owner.changePassphrase(from: nil, to: secret("pw"))
        try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("alpha")))
        // The other process: unlocked with the keys the rekey is about to retire.
        let stale = try VaultEngine(configuration)
        try stale.unlock(passphrase: secret("pw"), forUser: false)
        try owner.rekey(passphrase: secret("pw"))
        // Its unlock finishing after the rekey committed: it records the check values of the keys it holds.
        #expect(stale.locked { $0.recordKeyChecks() } == false, "retired keys are refused, not recorded")

        try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "b"), value: secret("beta")))
        #expect(try value(owner, "a") == "alpha" && value(owner, "b") == "beta", "the rekeying process reads and writes on")
        #expect(throws: StoreError.locked, "the stale process is locked out, not told the vault was tampered with") {
            let item = Item(.genericPassword, attributes: Attributes(service: "s", account: "c"), value: secret("gamma"))
            _ = try stale.inUse { (state) throws(StoreError) in try state.write([.add(item)]) }
        }
        let fresh = try Vault(configuration)
        try fresh.unlock(passphrase: secret("pw"))
        #expect(try fresh.verify().isSound)
    }

    @Test("an unlock after another process's rekey unwraps the new class keys: the class keys of the retired master are never kept to seal with")
    func unlockAfterRekeyDropsRetiredClassKeys() throws {
        let configuration = directory.vaultConfiguration()
        let first = try Vault(configuration)
        try first.changePassphrase(from: nil, to: secret("pw"))
        try first.unlock(passphrase: secret("pw"))
        try first.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("alpha")))
        try Vault(configuration).rekey(passphrase: secret("pw"))
        // As a second thread of the first process does, holding the retired keys, before any write noticed the rekey.
        try first.unlock(passphrase: secret("pw"))
        try first.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "b"), value: secret("beta")))
        let reader = try Vault(configuration)
        try reader.unlock(passphrase: secret("pw"))
        #expect(try value(reader, "b") == "beta", "sealed under the current class key")
        #expect(try reader.verify().isSound)
    }

    @Test("a passphrase change or rekey after another connection's writes carries the ledger those writes left, never the one this connection read before them")
    func keyChangeAfterOtherWritesKeepsTheirLedger() throws {
        let configuration = directory.vaultConfiguration()
        let owner = try Vault(configuration)
        try owner.changePassphrase(from: nil, to: secret("pw"))
        try owner.unlock(passphrase: secret("pw"))
        try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("alpha")))
        let writer = try Vault(configuration)
        try writer.unlock(passphrase: secret("pw"))
        // Each key change reads the vault's format first (a format-3 vault needs no upgrade),
        // after the other connection's write committed.
        try writer.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "w0"), value: secret("written 0")))
        try owner.changePassphrase(from: secret("pw"), to: secret("pw"))
        try writer.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "w1"), value: secret("written 1")))
        try owner.rekey(passphrase: secret("pw"))
        try writer.unlock(passphrase: secret("pw"))
        try writer.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "w2"), value: secret("written 2")))
        try owner.changePassphrase(from: secret("pw"), to: secret("pw"))
        let reader = try Vault(configuration)
        try reader.unlock(passphrase: secret("pw"))
        #expect(try reader.verify().isSound)
        #expect(try value(reader, "w2") == "written 2" && value(reader, "a") == "alpha")
    }
}
