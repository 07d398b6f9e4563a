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

    @Test(
        "a read of a vault whose record vanished says so on standard error and exits 4, still printing what it read and writing nothing; a Valet program says so with KEYCHAIN_LOG")
    func readOfVanishedRecordSaysSo() throws {
        defer { try? forgetRecord() }
        #expect(try keychain(["set", "-i", "Druidia", "Skroob"], input: "12345").status == 0)
        try forgetRecord()
        let before = try Data(contentsOf: URL(fileURLWithPath: vaultPath))

        let get = try keychain(["get", "-i", "Druidia", "Skroob"])
        #expect(get.status == 4 && get.output == "12345\n", "\(get.status) \(get.output)")
        #expect(get.stderr.contains("record of its newest generation is gone") && get.stderr.contains("verify --accept"), "\(get.stderr)")
        let missing = try keychain(["get", "-i", "Druidia", "Other"])
        #expect(missing.status == 4 && missing.stderr.contains("verify --accept"), "an item not found may be one the older copy lacks: \(missing.stderr)")
        let list = try keychain(["list", "-i", "Druidia"])
        #expect(list.status == 4 && list.output == "Skroob\n", "\(list.stderr)")
        #expect(try keychain(["status"]).status == 0, "status reports it in its own words")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vaultPath)) == before, "a read writes nothing")

        let valet = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_PATH": vaultPath, "KEYCHAIN_KERNEL_KEYRING": "on"]
        let quiet = try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: valet)
        #expect(quiet.status == 0 && quiet.output == "12345\n" && quiet.stderr.isEmpty, "\(quiet.output) \(quiet.stderr)")
        let logged = try Subprocess.run(
            KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: valet.merging(["KEYCHAIN_LOG": "1"]) { $1 })
        #expect(logged.status == 0 && logged.output == "12345\n", "\(logged.output)")
        #expect(logged.stderr.hasPrefix("keychain: ") && logged.stderr.contains("not vouched for"), "\(logged.stderr)")
        #expect(logged.stderr.components(separatedBy: "\n").count == 2, "said once: \(logged.stderr)")

        #expect(try keychain(["verify", "--accept"]).status == 0)
        let vouched = try keychain(["get", "-i", "Druidia", "Skroob"])
        #expect(vouched.status == 0 && vouched.stderr.isEmpty, "\(vouched.stderr)")
    }
}
