import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

@Suite("Lock state gives each accessibility class its meaning")
struct LockTests {
    let directory = TemporaryDirectory()

    func item(_ account: String, _ accessibility: Accessibility) -> Item {
        Item(.genericPassword, attributes: Attributes(service: "s", account: account, accessibility: accessibility), value: secret("v-\(account)"))
    }

    func read(_ vault: Vault, _ account: String) throws -> String? {
        try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: account), limit: .one, returnData: true)).first?.value?.string
    }

    @Test("whenUnlocked items are unreadable after lock() and readable again after unlock")
    func whenUnlockedAfterLock() throws {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(item("u", .whenUnlocked))
        try vault.add(item("tdo", .whenUnlockedThisDeviceOnly))
        try vault.add(item("afu", .afterFirstUnlock))
        vault.lock()
        #expect(vault.status().isUnlocked == false)
        #expect(throws: StoreError.locked) { try read(vault, "u") }
        #expect(throws: StoreError.locked) { try read(vault, "tdo") }
        #expect(throws: StoreError.locked) { try vault.add(item("u2", .whenUnlocked)) }
        #expect(try read(vault, "afu") == "v-afu", "afterFirstUnlock survives a lock, as on iOS")
        try vault.unlock(passphrase: secret("pw"))
        #expect(try read(vault, "u") == "v-u")
    }

    @Test("whenUnlocked items lock by themselves after the idle timeout")
    func idleTimeoutLocks() throws {
        // Long enough that a loaded machine never idles between two calls here; each call
        // pushes the timeout back.
        let vault = try Vault(directory.vaultConfiguration(idleTimeout: .seconds(1)))
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(item("u", .whenUnlocked))
        #expect(try read(vault, "u") == "v-u")
        Thread.sleep(forTimeInterval: 2.5)
        #expect(vault.status().isUnlocked == false, "the idle timer wiped the keys without any call")
        #expect(throws: StoreError.locked) { try read(vault, "u") }
    }

    @Test("a vault without a passphrase is never locked (a device without a passcode)")
    func keyFileVaultAlwaysOpen() throws {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.add(item("u", .whenUnlocked))
        vault.lock()
        #expect(try read(vault, "u") == "v-u")
        try vault.unlock(passphrase: secret("anything"))
    }

    @Test(
        "afterFirstUnlock (and, while the user's unlocked state lasts, whenUnlocked) items are read by another process without the passphrase",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func afterFirstUnlockAcrossProcesses() throws {
        let vault = try Vault(directory.vaultConfiguration(kernelKeyring: true))
        defer { vault.forgetCachedKeys() }
        try vault.changePassphrase(from: nil, to: secret("pw"))
        try vault.add(item("afu", .afterFirstUnlock))
        try vault.add(item("wu", .whenUnlocked))
        let path = vault.location.path
        func get(_ account: String, _ accessibility: String) throws -> CommandResult {
            try KeychainExecutable.run(
                ["get", "--vault", path, "--service", "s", "--accessibility", accessibility, account],
                environment: ["KEYCHAIN_KERNEL_KEYRING": "on"], home: directory.path)
        }
        let afu = try get("afu", "afterFirstUnlock")
        #expect(afu.status == 0 && afu.output == "v-afu\n", "\(afu.stderr)")
        #expect(try get("wu", "whenUnlocked").status == 3, "setting the passphrase opens whenUnlocked items to this process only")
        try vault.unlock(forUser: secret("pw"))
        let wu = try get("wu", "whenUnlocked")
        #expect(wu.status == 0 && wu.output == "v-wu\n", "whenUnlocked too, while the user's unlocked state lasts: \(wu.stderr)")
        vault.forgetCachedKeys()
        let afterReboot = try get("afu", "afterFirstUnlock")
        #expect(afterReboot.status == 3, "once the cache is gone (as after a reboot) the passphrase is needed again")
        #expect(try get("wu", "whenUnlocked").status == 3)
    }

    /// A passphrase vault holding a whenUnlocked item "wu", unlocked for the user by a process
    /// with no idle lock of its own, as `keychain serve` after its pinentry; and its configuration.
    func unlockedForTheUser(timeout: Duration = .seconds(300)) throws -> (Vault, VaultConfiguration) {
        var configuration = directory.vaultConfiguration(kernelKeyring: true)
        configuration.idleTimeout = nil
        configuration.userUnlockTimeout = timeout
        let vault = try Vault(configuration)
        do {
            try vault.changePassphrase(from: nil, to: secret("pw"))
            try vault.add(item("wu", .whenUnlocked))
            try vault.unlock(forUser: secret("pw"))
        } catch {
            vault.forgetCachedKeys()
            throw error
        }
        return (vault, configuration)
    }

    @Test(
        "a process with no idle lock of its own that unlocked for the user (keychain serve) keeps that unlock alive by its uses, and locks when it times out",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func unlockForTheUserEndsInTheProcessThatMadeIt() throws {
        let (vault, _) = try unlockedForTheUser(timeout: .seconds(3))
        defer { vault.forgetCachedKeys() }
        // Used for longer than the timeout: each use is the user's, and pushes it back.
        for _ in 0..<10 {
            #expect(try read(vault, "wu") == "v-wu")
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(vault.isAvailable(.whenUnlocked))
        Thread.sleep(forTimeInterval: 5)
        #expect(!vault.isAvailable(.whenUnlocked), "the user's unlock timed out: the process that made it locked too")
        #expect(throws: StoreError.locked) { try read(vault, "wu") }
    }

    @Test(
        "a lock for the user reaches a process that unlocked for the user (keychain serve) at once, however recently it looked at the lock state",
        .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
    func lockForTheUserReachesTheUnlockingProcessAtOnce() throws {
        let (served, configuration) = try unlockedForTheUser()
        defer { served.forgetCachedKeys() }
        // Clients ask whether the vault is locked many times a second; each answer is a look.
        for _ in 0..<50 { #expect(served.isAvailable(.whenUnlocked)) }
        #expect(try read(served, "wu") == "v-wu")
        // Another process (its own engine) runs `keychain lock`.
        try Vault(configuration).lockForUser()
        #expect(!served.isAvailable(.whenUnlocked), "a look right after the lock says locked")
        #expect(!served.status().isUnlocked)
        #expect(throws: StoreError.locked) { try read(served, "wu") }
    }

    @Test("ThisDeviceOnly items do not open on another machine; the others do")
    func thisDeviceOnlyBoundToMachine() throws {
        do {
            let vault = try Vault(directory.vaultConfiguration(machineID: "machine-A"))
            try vault.add(item("tdo", .whenUnlockedThisDeviceOnly))
            try vault.add(item("portable", .whenUnlocked))
        }
        let elsewhere = try Vault(directory.vaultConfiguration(machineID: "machine-B"))
        #expect(try read(elsewhere, "portable") == "v-portable")
        #expect(throws: StoreError.boundToAnotherMachine) { try read(elsewhere, "tdo") }
        #expect(!elsewhere.isAvailable(.whenUnlockedThisDeviceOnly))
        let home = try Vault(directory.vaultConfiguration(machineID: "machine-A"))
        #expect(try read(home, "tdo") == "v-tdo")
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
