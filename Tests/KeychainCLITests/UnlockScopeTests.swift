import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Only `keychain unlock` (``Vault/unlock(forUser:)``) opens whenUnlocked
/// items to the user's other processes. A passphrase file, a systemd credential or a prompt
/// opens the vault for the process that read it; every passphrase source meets the same
/// ownership and mode rules; `passwd` leaves one stated state.
@Suite("Only keychain unlock unlocks for others", .serialized)
struct UnlockScopeTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    /// The command with the kernel keyring on (the other tests keep it off).
    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath, environment: ["KEYCHAIN_KERNEL_KEYRING": "on"]) }

    @Test("a get with KEYCHAIN_PASSPHRASE_FILE or a credentials directory leaves the vault locked for the next process; keychain unlock opens it")
    func oneOffReadPublishesNothing() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        let passwd = try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase])
        #expect(passwd.status == 0 && passwd.stderr.contains("stay locked for your other processes"), "\(passwd.stderr)")
        defer { _ = try? keychain(["lock"]) }
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).status == 3, "passwd leaves it locked for others")

        let credentials = directory.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: passphrase, toPath: credentials + "/keychain-passphrase")
        for environment in [["KEYCHAIN_PASSPHRASE_FILE": passphrase], ["CREDENTIALS_DIRECTORY": credentials]] {
            let own = try keychain(["get", "--identifier", "Druidia", "Skroob"], environment: environment)
            #expect(own.status == 0 && own.output == "12345\n", "\(environment): \(own.stderr)")
            let next = try keychain(["get", "--identifier", "Druidia", "Skroob"])
            #expect(next.status == 3, "\(environment): the one-off read published nothing: \(next.output)")
        }
        #expect(try keychain(["unlock"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase]).status == 0)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).output == "12345\n", "keychain unlock opens it for the user")
    }

    @Test("a passphrase in a credentials directory at 0644 is refused as KEYCHAIN_PASSPHRASE_FILE's is")
    func credentialsMeetTheSameRules() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        defer { _ = try? keychain(["lock"]) }
        let credentials = directory.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: passphrase, toPath: credentials + "/keychain-passphrase")
        chmod(credentials + "/keychain-passphrase", 0o644)
        chmod(passphrase, 0o644)
        for environment in [["KEYCHAIN_PASSPHRASE_FILE": passphrase], ["CREDENTIALS_DIRECTORY": credentials]] {
            let refused = try keychain(["get", "--identifier", "Druidia", "Skroob"], environment: environment)
            #expect(refused.status == 4 && refused.stderr.contains("other users can read"), "\(environment): \(refused.status) \(refused.stderr)")
        }
    }

    @Test("the library: unlock(passphrase:) opens whenUnlocked items in this process only, unlock(forUser:) for the user's other processes")
    func library() throws {
        let configuration = directory.vaultConfiguration(kernelKeyring: true)
        let owner = try Vault(configuration)
        try owner.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
        try owner.changePassphrase(from: nil, to: secret("pw"))
        defer { owner.forgetCachedKeys() }
        owner.forgetCachedKeys()
        let query = Query(.genericPassword, attributes: Attributes(service: "s", account: "a"), returnData: true)
        try owner.unlock(passphrase: secret("pw"))
        #expect(try owner.copyMatching(query).first?.value?.string == "v")
        #expect(throws: StoreError.locked) { try Vault(configuration).copyMatching(query) }
        try owner.unlock(forUser: secret("pw"))
        #expect(try Vault(configuration).copyMatching(query).first?.value?.string == "v")
    }

    @Test(
        "a credential as systemd makes it where its file system has ACLs (root's, read granted to the service by an ACL, its mask shown as group read) unlocks; a root-owned one others may read does not",
        .enabled(if: geteuid() == 0, "needs root to make a root-owned file for another user")
    )
    func systemdACLCredential() throws {
        // The test runs as root: the "service user" is the one the command runs as, root too,
        // so the owner is root either way; what is checked is the mode rule for root's files.
        let credentials = directory.path + "/acl-credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        let file = credentials + "/keychain-passphrase"
        _ = FileManager.default.createFile(atPath: file, contents: Data("correct horse".utf8), attributes: [.posixPermissions: 0o440])
        let keychain = { (environment: [String: String]) throws -> CommandResult in
            try KeychainExecutable.run(["get", "--vault", self.directory.vaultPath("acl.keychain"), "-s", "svc", "alice"], environment: environment, home: self.directory.path)
        }
        #expect(try KeychainExecutable.run(["set", "--vault", directory.vaultPath("acl.keychain"), "-s", "svc", "alice"], input: Data("s".utf8), home: directory.path).status == 0)
        #expect(
            try KeychainExecutable.run(
                ["passwd", "--vault", directory.vaultPath("acl.keychain")], input: Data("correct horse\n".utf8), home: directory.path
            ).status == 0)
        let read = try keychain(["CREDENTIALS_DIRECTORY": credentials])
        #expect(read.status == 0 && read.output == "s\n", "\(read.stderr)")
        chmod(file, 0o444)
        let open = try keychain(["CREDENTIALS_DIRECTORY": credentials])
        #expect(open.status != 0, "others may read it: \(open.stderr)")
    }
}
