import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a review of the user's one lock state (#46) found, each as the slip it proves fixed.
@Suite("Review of #46: one lock state", .serialized)
struct Review46Tests {
    let directory = TemporaryDirectory()

    /// This process's resident memory, in bytes.
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// A passphrase vault of this process at the default scrypt cost, holding an
    /// afterFirstUnlock and a whenUnlocked item, locked (the afterFirstUnlock key stays held, as
    /// on iOS).
    func lockedVault() throws -> Vault {
        let vault = try passphraseVault()
        vault.lock()
        return vault
    }

    /// A new passphrase vault at the default scrypt cost, holding an afterFirstUnlock and a
    /// whenUnlocked item, unlocked in this process.
    func passphraseVault() throws -> Vault {
        var configuration = directory.vaultConfiguration()
        configuration.idleTimeout = nil
        configuration.scryptParameters = .default
        let vault = try Vault(configuration)
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "afu", accessibility: .afterFirstUnlock), value: secret("a")))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "wu", accessibility: .whenUnlocked), value: secret("w")))
        return vault
    }

    /// Starts `unlock` on another thread and returns once the key derives (scrypt has taken most
    /// of its memory), with what collects the unlock's outcome.
    func deriving(_ unlock: @escaping @Sendable () throws(StoreError) -> Void) throws -> Collector<StoreError?> {
        let outcome = Collector<StoreError?>()
        let before = Self.residentBytes()
        let thread = Thread {
            do throws(StoreError) {
                try unlock()
                outcome.add(nil)
            } catch {
                outcome.add(error)
            }
        }
        thread.start()
        let deadline = Date().addingTimeInterval(60)
        while Self.residentBytes() - before < 96 << 20, outcome.count == 0, Date() < deadline { usleep(1_000) }
        try #require(outcome.count == 0, "the unlock ended before its key derivation was seen")
        return outcome
    }

    /// A vault on the kernel keyring with one item, locked for the user, whose passphrase "pw"
    /// derives at the default cost: scrypt's 128 MiB show in this process's memory while an
    /// unlock derives its key (after it read the lock stamp), which ``deriving(_:)`` waits for.
    func userLockedVault(account: String, accessibility: Accessibility) throws -> (VaultConfiguration, Vault) {
        var configuration = directory.vaultConfiguration(kernelKeyring: true)
        configuration.idleTimeout = nil
        configuration.scryptParameters = .default
        let owner = try Vault(configuration)
        do {
            try owner.changePassphrase(from: nil, to: secret("pw"))
            try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: account, accessibility: accessibility), value: secret("v")))
        } catch {
            owner.forgetCachedKeys()
            throw error
        }
        owner.lockForUser()
        return (configuration, owner)
    }

    @Test("while an unlock derives its key, another thread of the process reads an afterFirstUnlock item and the status")
    func readsAreAnsweredDuringAnUnlocksDerivation() throws {
        let vault = try lockedVault()
        let outcome = try deriving { () throws(StoreError) in try vault.unlock(passphrase: secret("pw")) }
        let read = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "afu"), limit: .one, returnData: true))
        let status = vault.status()
        // Ordering only: a read that waited for the vault's lock would find the unlock done.
        #expect(!status.isUnlocked, "the read and the status waited for the unlock's key derivation (the vault's lock was held across scrypt)")
        #expect(outcome.count == 0, "the read and the status were answered only once the unlock had ended")
        #expect(read.first?.value?.string == "a")
        while outcome.count == 0 { usleep(10_000) }
        #expect(outcome.all.first! == nil)
        #expect(vault.isAvailable(.whenUnlocked))
    }

    @Test("while a rekey derives the current passphrase's key, another thread of the process is answered")
    func callsAreAnsweredDuringARekeysDerivation() throws {
        let engine = try VaultEngine(passphraseVault().configuration)
        let before = engine.locked { $0.header }
        let outcome = try deriving { () throws(StoreError) in try engine.rekey(passphrase: secret("pw")) }
        let status = engine.locked { $0.status() }
        // Ordering only: a call that waited for the vault's lock would find the new header.
        #expect(engine.locked { $0.header == before }, "the status waited for the rekey's key derivation (the vault's lock was held across scrypt)")
        #expect(status.hasPassphrase)
        while outcome.count == 0 { usleep(10_000) }
        #expect(outcome.all.first! == nil)
        #expect(engine.locked { $0.header != before }, "the rekey gave no new keys")
        let vault = try Vault(engine.configuration)
        try vault.unlock(passphrase: secret("pw"))
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "wu"), limit: .one, returnData: true)).first?.value?.string == "w")
    }

    @Test(
        "a lock of this process that lands while an unlock derives its key wins: the vault stays locked, and an unlock for the user says so",
        arguments: [false, true])
    func aLockDuringTheDerivationWins(forUser: Bool) throws {
        let vault = try lockedVault()
        let outcome = try deriving { () throws(StoreError) in
            if forUser { try vault.unlock(forUser: secret("pw")) } else { try vault.unlock(passphrase: secret("pw")) }
        }
        vault.lock()
        while outcome.count == 0 { usleep(10_000) }
        #expect((outcome.all.first! != nil) == forUser)
        #expect(!vault.isAvailable(.whenUnlocked), "the unlock opened the vault after a lock that came later")
        #expect(throws: StoreError.locked) {
            try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "wu"), limit: .one, returnData: true))
        }
    }

    @Test(
        "a lock that lands while an unlock for the user derives its key wins in every process: the unlock publishes nothing and says so",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func lockDuringAnUnlockLocksEveryProcess() throws {
        let (configuration, owner) = try userLockedVault(account: "wu", accessibility: .whenUnlocked)
        defer { owner.forgetCachedKeys() }

        let unlocking = try Vault(configuration)
        let locking = try Vault(configuration)
        // The lock lands once the derivation has taken most of its memory: after the stamp read.
        let outcome = try deriving { () throws(StoreError) in try unlocking.unlock(forUser: secret("pw")) }
        locking.lockForUser()
        while outcome.count == 0 { usleep(10_000) }

        #expect(outcome.all.first! != nil, "the unlock reported success although the vault was locked while it ran")
        let later = try Vault(configuration)
        #expect(!later.isAvailable(.whenUnlocked), "a process started after the lock took the user's unlocked state the unlock published")
        #expect(throws: StoreError.locked) {
            try later.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "wu"), limit: .one, returnData: true))
        }
        #expect(!unlocking.isAvailable(.whenUnlocked), "the unlocking process serves on after the lock")
    }

    @Test(
        "a lock for the user that lands while an unlock for the user derives its key leaves no afterFirstUnlock cache: a new process needs the passphrase",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func lockDuringAnUnlockLeavesNoCache() throws {
        let (configuration, owner) = try userLockedVault(account: "afu", accessibility: .afterFirstUnlock)
        defer { owner.forgetCachedKeys() }
        let query = Query(.genericPassword, attributes: Attributes(service: "s", account: "afu"), limit: .one, returnData: true)
        #expect(throws: StoreError.locked) { try Vault(configuration).copyMatching(query) }

        let unlocking = try Vault(configuration)
        let outcome = try deriving { () throws(StoreError) in try unlocking.unlock(forUser: secret("pw")) }
        try Vault(configuration).lockForUser()
        while outcome.count == 0 { usleep(10_000) }

        #expect(outcome.all.first! != nil, "the unlock reported success although the vault was locked while it ran")
        #expect(throws: StoreError.locked, "a process started after the lock read an afterFirstUnlock item through the cache the unlock put back") {
            try Vault(configuration).copyMatching(query)
        }
    }

    @Test(
        "a process that unlocked for the user keeps, by its uses, the idle timeout of the user's latest unlock, not its own",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func usesKeepTheLatestUnlocksTimeout() throws {
        var configuration = directory.vaultConfiguration(kernelKeyring: true)
        configuration.idleTimeout = nil
        let owner = try Vault(configuration)
        defer { owner.forgetCachedKeys() }
        try owner.changePassphrase(from: nil, to: secret("pw"))
        let query = Query(.genericPassword, attributes: Attributes(service: "s", account: "wu"), limit: .one, returnData: true)
        try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "wu", accessibility: .whenUnlocked), value: secret("v")))
        // A serve unlocked through its pinentry, with the default timeout of its environment.
        let serve = try Vault(configuration)
        try serve.unlock(forUser: secret("pw"))
        Thread.sleep(forTimeInterval: 1.2)
        // The user unlocks again with a short timeout (`keychain unlock --timeout 2`).
        var short = configuration
        short.userUnlockTimeout = .seconds(2)
        try Vault(short).unlock(forUser: secret("pw"))
        // A use of the serve's pushes the user's unlock back: by the user's 2 s.
        #expect(try serve.copyMatching(query).first?.value?.string == "v")
        Thread.sleep(forTimeInterval: 4)
        #expect(!(try Vault(configuration)).isAvailable(.whenUnlocked), "the user's 2 s unlock outlived its timeout: the serve's use set its own")
    }
}
