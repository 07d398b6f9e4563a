import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// `keychain status` and `verify` say when this boot's record of the vault vanished, writes wait,
/// and `verify --accept` (with the passphrase) lets them go on (no-silent-success issue, item 3).
@Suite(
    "The rollback check at the command",
    .enabled(if: (try? KernelKeyring().probe().get()) != nil, "the kernel keyring (keyctl) is refused here"))
struct RollbackCheckCommandTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath, environment: ["KEYCHAIN_KERNEL_KEYRING": "on"]) }

    func forgetRecord() throws {
        try VaultEngine(VaultConfiguration(location: VaultLocation(path: vaultPath))).locked { $0.forgetGeneration() }
    }

    @Test("a passphrase vault whose record vanished: status and verify say unknown, set is refused, verify --accept with the passphrase lets it go on")
    func vanishedRecordAtTheCommand() throws {
        defer { try? forgetRecord() }
        let passphraseFile = directory.path + "/passphrase"
        _ = FileManager.default.createFile(atPath: passphraseFile, contents: Data("pw\n".utf8), attributes: [.posixPermissions: 0o600])
        let withPassphrase = ["KEYCHAIN_PASSPHRASE_FILE": passphraseFile]
        #expect(try keychain(["set", "-s", "s", "a"], input: "one").status == 0)
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphraseFile]).status == 0)
        #expect(try keychain(["set", "-s", "s", "a", "--force"], input: "two", environment: withPassphrase).status == 0)
        try forgetRecord()

        let status = try keychain(["status"], environment: withPassphrase)
        #expect(status.output.contains("rollback check:    unknown"), "\(status.output)")
        let verify = try keychain(["verify"], environment: withPassphrase)
        #expect(verify.status != 0 && verify.output.contains("rollback:  unknown"), "\(verify.output)")
        let refused = try keychain(["set", "-s", "s", "a", "--force"], input: "three", environment: withPassphrase)
        #expect(refused.status != 0 && refused.stderr.contains("verify --accept"), "\(refused.stderr)")
        #expect(try keychain(["get", "-s", "s", "a"], environment: withPassphrase).output == "two\n", "reads go on")

        let accepted = try keychain(["verify", "--accept"], environment: withPassphrase)
        #expect(accepted.status == 0 && accepted.output.contains("rollback:  current"), "\(accepted.output) \(accepted.stderr)")
        #expect(try keychain(["set", "-s", "s", "a", "--force"], input: "three", environment: withPassphrase).status == 0)
        #expect(try keychain(["get", "-s", "s", "a"], environment: withPassphrase).output == "three\n")
    }
}
