import Foundation
import KeychainTestSupport
import Testing

/// "Unlocked" is a state of the user, as on a phone: one unlock opens whenUnlocked items to the
/// user's other processes until `keychain lock` or the idle timeout; services unlock themselves
/// from a systemd credential.
@Suite("The user's lock state", .serialized)
struct UserLockStateTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    /// The command with the kernel keyring on (the other tests keep it off).
    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath, environment: ["KEYCHAIN_KERNEL_KEYRING": "on"]) }

    func prepare() throws -> String {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        #expect(try keychain(["lock"]).status == 0)
        return passphrase
    }

    @Test("after `keychain unlock`, a separate process reads a whenUnlocked item without the passphrase; `keychain lock` closes it again")
    func unlockIsForTheUser() throws {
        let passphrase = try prepare()
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).status == 3, "locked before the unlock")
        let unlock = try keychain(["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let read = try keychain(["get", "--identifier", "Druidia", "Skroob"])
        #expect(read.status == 0 && read.output == "12345\n", "another process, no passphrase: \(read.stderr)")
        let status = try keychain(["status"])
        #expect(status.output.contains("locked:            no (unlocked for your processes"), "\(status.output)")
        #expect(try keychain(["lock"]).status == 0)
        let after = try keychain(["get", "--identifier", "Druidia", "Skroob"])
        #expect(after.status == 3, "locked again for every process: \(after.stderr)")
        #expect(try keychain(["status"]).output.contains("locked:            yes"))
    }

    @Test("`keychain unlock` on a fresh passphrase vault unlocks it: status says so, another process's set and get work")
    func unlockOpensAFreshVault() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        let unlock = try keychain(["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let status = try keychain(["status"])
        #expect(status.output.contains("locked:            no (unlocked for your processes"), "\(status.output)")
        #expect(!status.output.contains("available classes: none"), "\(status.output)")
        #expect(status.output.contains("idle lock:         after 300 s without use"), "\(status.output)")
        let set = try keychain(["set", "--identifier", "Druidia", "Skroob"], input: "12345")
        #expect(set.status == 0, "another process stores without the passphrase: \(set.stderr)")
        let read = try keychain(["get", "--identifier", "Druidia", "Skroob"])
        #expect(read.status == 0 && read.output == "12345\n", "\(read.stderr)")
        #expect(try keychain(["lock"]).status == 0)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).status == 3, "locked again")
    }

    @Test("the idle timeout ends the user's unlocked state: a fresh process afterwards needs the passphrase")
    func idleTimeoutLocks() throws {
        let passphrase = try prepare()
        #expect(try keychain(["unlock", "--timeout", "2"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase]).status == 0)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).status == 0)
        Thread.sleep(forTimeInterval: 3.5)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).status == 3, "timed out")
        let again = try keychain(["get", "--identifier", "Druidia", "Skroob"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(again.status == 0 && again.output == "12345\n")
        #expect(try keychain(["lock"]).status == 0)
    }

    @Test("a Valet service started with a systemd credential reads its whenUnlocked item from a locked vault, with nothing but Valet's API")
    func serviceUnlocksItself() throws {
        let passphrase = try prepare()
        let credentials = directory.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: passphrase, toPath: credentials + "/keychain-passphrase")
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_PATH": vaultPath, "KEYCHAIN_KERNEL_KEYRING": "off"]
        let locked = try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: environment)
        #expect(locked.status == 1, "without the credential the vault stays locked: \(locked.output)")
        var service = environment
        service["CREDENTIALS_DIRECTORY"] = credentials
        let served = try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: service)
        #expect(served.status == 0 && served.output == "12345\n", "\(served.output) \(served.stderr)")
    }
}
