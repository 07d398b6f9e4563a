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

    @Test(
        "a lock that lands while an unlock for the user derives its key wins in every process: the unlock publishes nothing and says so",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func lockDuringAnUnlockLocksEveryProcess() throws {
        var configuration = directory.vaultConfiguration(kernelKeyring: true)
        configuration.idleTimeout = nil
        // The default cost: scrypt takes 128 MiB, which shows in this process's memory while
        // the key derives (after the unlock read the lock stamp).
        configuration.scryptParameters = .default
        let owner = try Vault(configuration)
        defer { owner.forgetCachedKeys() }
        try owner.changePassphrase(from: nil, to: secret("pw"))
        try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "wu", accessibility: .whenUnlocked), value: secret("v")))
        owner.lockForUser()

        let unlocking = try Vault(configuration)
        let locking = try Vault(configuration)
        let outcome = Collector<StoreError?>()
        let before = Self.residentBytes()
        let thread = Thread {
            do throws(StoreError) {
                try unlocking.unlock(forUser: secret("pw"))
                outcome.add(nil)
            } catch {
                outcome.add(error)
            }
        }
        thread.start()
        // The lock lands once the derivation has taken most of its memory: after the stamp read.
        let deadline = Date().addingTimeInterval(60)
        while Self.residentBytes() - before < 96 << 20, outcome.count == 0, Date() < deadline { usleep(1_000) }
        try #require(outcome.count == 0, "the unlock ended before the lock could land during it")
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
