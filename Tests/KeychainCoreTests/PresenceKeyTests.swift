import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The presence public key is vouched for by the master key, never by a cached key: a same-user
/// process that read the lookup key from the kernel keyring cannot swap in its own public key
/// (vault-format issue, finding 7).
@Suite("The presence public key cannot be swapped by a holder of cached keys", .serialized)
struct PresenceKeyTests {
    let directory = TemporaryDirectory()
    let passphrase = "presence-key-tests"

    func presenceItem(_ account: String, accessibility: Accessibility = .afterFirstUnlock) -> Item {
        Item(
            .genericPassword, attributes: Attributes(service: "bank", account: account, accessibility: accessibility, accessControl: .userPresence),
            value: secret("1234"))
    }

    /// A vault with a passphrase, unlocked with the kernel keyring on, and the lookup key an
    /// attacker of the same user reads from that cache.
    func unlockedVault() throws -> (Vault, lookup: HMACKey, raw: RawVault, header: VaultHeader) {
        let configuration = directory.vaultConfiguration(kernelKeyring: true)
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessibility: .afterFirstUnlock), value: secret("v")))
        try vault.changePassphrase(from: nil, to: secret(passphrase))
        let raw = try RawVault(configuration.location.path)
        let header = try VaultHeader.decode(try raw.blobs("SELECT 0, value FROM meta WHERE name = 'header'")[0].1)
        let cached = try #require(KernelKeyring().load("swift-keychain:v1:" + Digest.hex(header.vaultID)), "the afterFirstUnlock cache")
        let lookup = cached.withUnsafeBytes { HMACKey(SecretBytes(UnsafeRawBufferPointer(rebasing: $0[0..<32]))) }
        return (vault, lookup, raw, header)
    }

    func plant(_ record: PresenceKeyRecord, in raw: RawVault) throws {
        try raw.connection.statement("UPDATE meta SET value = ? WHERE name = 'presence'").run([.blob(record.encoded())])
    }

    @Test("a swapped public key tagged with the cached lookup key is refused; nothing is sealed to it")
    func swappedKeyRefused() throws {
        let (vault, lookup, raw, _) = try unlockedVault()
        defer { vault.forgetCachedKeys() }
        try vault.add(presenceItem("before"))
        let (_, attackerPublic) = try X25519.generate()
        let record = PresenceKeyRecord(
            publicKey: attackerPublic, publicKeyTag: lookup.authenticationCode(PresenceKeyRecord.tagMessage(attackerPublic)),
            wrappedPrivateKey: [UInt8](repeating: 7, count: X25519.keySize + AESGCM.overhead))
        try plant(record, in: raw)
        #expect(throws: StoreError.tampered("the presence public key failed verification")) { try vault.add(self.presenceItem("after")) }
        // The old (version 1) tag scheme, which trusted the lookup key: refused, and the upgrade
        // at the next unlock proves the key pair, so it stays refused.
        var legacy = record
        legacy.recordVersion = 1
        try plant(legacy, in: raw)
        let reopened = try Vault(directory.vaultConfiguration(kernelKeyring: true))
        try reopened.unlock(passphrase: secret(passphrase))
        #expect(throws: StoreError.self) { try reopened.add(self.presenceItem("after")) }
        #expect(throws: StoreError.itemNotFound) { try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(account: "after"))) }
    }

    @Test("a genuine version 1 record is upgraded at the next unlock, and presence items keep working")
    func legacyRecordUpgraded() throws {
        let (vault, lookup, raw, _) = try unlockedVault()
        defer { vault.forgetCachedKeys() }
        let current = try #require(PresenceKeyRecord.decode(try raw.blobs("SELECT 0, value FROM meta WHERE name = 'presence'")[0].1))
        var legacy = current
        legacy.recordVersion = 1
        legacy.publicKeyTag = lookup.authenticationCode(PresenceKeyRecord.tagMessage(current.publicKey))
        try plant(legacy, in: raw)
        let reopened = try Vault(directory.vaultConfiguration(kernelKeyring: true))
        try reopened.unlock(passphrase: secret(passphrase))
        let upgraded = try #require(PresenceKeyRecord.decode(try raw.blobs("SELECT 0, value FROM meta WHERE name = 'presence'")[0].1))
        #expect(upgraded.recordVersion == PresenceKeyRecord.version && upgraded.publicKey == current.publicKey)
        try reopened.add(presenceItem("pin"))
        let authenticator = ScriptedAuthenticator([.passphrase(passphrase)])
        let read = try reopened.copyMatching(
            Query(
                .genericPassword, attributes: Attributes(account: "pin"), limit: .one, returnData: true,
                authentication: AuthenticationContext(authenticator: authenticator)))
        #expect(read.first?.value?.string == "1234")
    }

    @Test("a process holding only cached keys cannot write a presence item (it could not vouch for the key); any class may carry one")
    func writesNeedThePassphrase() throws {
        let (vault, _, _, _) = try unlockedVault()
        defer { vault.forgetCachedKeys() }
        try vault.add(presenceItem("any-class", accessibility: .afterFirstUnlock))
        let other = try Vault(directory.vaultConfiguration(kernelKeyring: true))
        #expect(other.isAvailable(.afterFirstUnlock), "the cache opens afterFirstUnlock items")
        #expect(throws: StoreError.locked) { try other.add(self.presenceItem("cached-only")) }
    }
}

/// Keys taken from the kernel-keyring cache are checked against the vault's key-check values
/// first (vault-format issue, finding 6).
@Suite("Planted kernel-keyring entries are never used", .serialized)
struct PlantedCacheTests {
    let directory = TemporaryDirectory()

    @Test("after keychain lock, random keys planted under the cache's description seal nothing and open nothing")
    func plantedKeysIgnored() throws {
        let configuration = directory.vaultConfiguration(kernelKeyring: true)
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessibility: .afterFirstUnlock), value: secret("v")))
        try vault.changePassphrase(from: nil, to: secret("pw"))
        let raw = try RawVault(configuration.location.path)
        let header = try VaultHeader.decode(try raw.blobs("SELECT 0, value FROM meta WHERE name = 'header'")[0].1)
        let description = "swift-keychain:v1:" + Digest.hex(header.vaultID)
        let genuine = try #require(KernelKeyring().load(description))
        #expect(try Vault(configuration).copyMatching(Query(.genericPassword, returnData: true)).first?.value?.string == "v", "the genuine cache opens the item")
        vault.forgetCachedKeys()
        defer { KernelKeyring().remove(description) }

        // A planted lookup key and class key, and the genuine lookup key with a planted class key.
        let plantedClass = [Accessibility.afterFirstUnlock.code] + Random.bytes(32)
        let lookup = genuine.withUnsafeBytes { Array($0[0..<32]) }
        for payload in [Random.bytes(32) + plantedClass, lookup + plantedClass] {
            try KernelKeyring().store(SecretBytes(payload), as: description)
            let other = try Vault(configuration)
            #expect(!other.isAvailable(.afterFirstUnlock), "the planted keys are not taken")
            #expect(throws: StoreError.locked) {
                try other.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "planted", accessibility: .afterFirstUnlock), value: secret("x")))
            }
        }
        #expect(try RawVault(configuration.location.path).blobs("SELECT count(*), x'' FROM items")[0].0 == 1, "nothing was sealed under a planted key")
    }
}
