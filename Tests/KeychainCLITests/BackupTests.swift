import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// A consistent backup of a live vault, and a restore that never replaces one (vault-format
/// issue, finding 11); relative vault paths.
@Suite("Backup and restore")
struct BackupTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
    }

    @Test("a backup taken while a program holds recent writes in the WAL has them all, opens, and is private")
    func backupOfALiveVault() throws {
        // A handle that stays open keeps its writes in default.keychain-wal, as a running program does.
        let live = try Vault(VaultConfiguration(location: VaultLocation(path: vaultPath), usesKernelKeyring: false))
        for index in 0..<20 { try live.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "k\(index)"), value: SecretBytes(utf8: "v\(index)"))) }
        #expect(FileManager.default.fileExists(atPath: vaultPath + "-wal"))
        let file = directory.path + "/backup.keychain"
        let result = try keychain(["backup", "--vault", vaultPath, file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(mode(file) == 0o600 && mode(file + ".key") == 0o600)
        let copy = try Vault(VaultConfiguration(location: VaultLocation(path: file), usesKernelKeyring: false))
        #expect(try copy.copyMatching(Query(.genericPassword)).count == 20, "every write, the WAL's included")
        #expect(try copy.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "k19"), returnData: true)).first?.value?.string == "v19")
        let again = try keychain(["backup", "--vault", vaultPath, file])
        #expect(again.status == 2 && again.stderr.contains("never writes over"), "\(again.stderr)")
    }

    @Test("restore puts a backup in place of a missing vault, and never replaces one")
    func restore() throws {
        #expect(try keychain(["set", "--vault", vaultPath, "--service", "s", "a"], input: "kept").status == 0)
        let file = directory.path + "/backup.keychain"
        #expect(try keychain(["backup", "--vault", vaultPath, file]).status == 0)
        let refused = try keychain(["restore", "--vault", vaultPath, file])
        #expect(refused.status == 2 && refused.stderr.contains("already exists"), "\(refused.stderr)")
        let elsewhere = directory.path + "/new/restored.keychain"
        #expect(try keychain(["restore", "--vault", elsewhere, file]).status == 0)
        let read = try keychain(["get", "--vault", elsewhere, "--service", "s", "a"])
        #expect(read.status == 0 && read.output == "kept\n", "\(read.stderr)")
    }

    @Test("a passphrase vault's backup needs no key file and opens with the passphrase")
    func passphraseBackup() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try keychain(["set", "--vault", vaultPath, "--service", "s", "a"], input: "secret").status == 0)
        #expect(try keychain(["passwd", "--vault", vaultPath], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        let file = directory.path + "/backup.keychain"
        #expect(try keychain(["backup", "--vault", vaultPath, file]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: file + ".key"))
        let read = try keychain(["get", "--vault", file, "--service", "s", "a"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(read.status == 0 && read.output == "secret\n", "\(read.stderr)")
    }

    @Test("relative vault paths are taken from the working directory")
    func relativePaths() throws {
        let script =
            #"cd "$D" && printf v | "$K" set --vault rel.keychain --service s a && "$K" get --vault ./rel.keychain --service s a && KEYCHAIN_PATH=rel.keychain "$K" get --service s a"#
        let result = try Subprocess.run(
            "/bin/bash", ["-c", script],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": directory.path, "K": KeychainExecutable.path,
                "D": directory.path, "KEYCHAIN_KERNEL_KEYRING": "off",
            ])
        #expect(result.status == 0 && result.output == "v\nv\n", "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/rel.keychain"))
    }
}
