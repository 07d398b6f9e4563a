import Foundation
import KeychainTestSupport
import Testing

/// Messages that say what happened and what to do, where a generic one misled.
@Suite("Messages that say what happened and what to do")
struct HelpfulMessagesTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath) }

    @Test("status on a machine without a session bus says so calmly, with no library error")
    func statusWithoutABus() throws {
        let status = try KeychainExecutable.run(["status", "--vault", vaultPath], home: directory.path)
        #expect(status.status == 0 && status.output.contains("secret service:    none here (no session bus"), "\(status.output)")
        #expect(!status.output.contains("quark") && !status.output.contains("autolaunch") && !status.output.contains("not reachable"), "\(status.output)")
        let backend = try KeychainExecutable.run(["status", "--backend", "secret-service"], home: directory.path)
        #expect(backend.output.contains("none here (no session bus"), "\(backend.output)")
    }

    @Test("status of a locked vault counts no items by unlocking it with the passphrase the environment offers: it shows the rows and says why")
    func statusDoesNotUnlockToCount() throws {
        let passphrase = directory.file("pw", "correct horse")
        chmod(passphrase, 0o600)
        #expect(try keychain(["set", "-i", "Druidia", "Skroob"], input: "12345").status == 0)
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        let status = try keychain(["status"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        #expect(status.output.contains("locked:            yes"), "\(status.output)")
        #expect(status.output.contains("rows (items are counted once the vault is unlocked)"), "\(status.output)")
    }

    @Test("a KEYCHAIN_PATH in a missing directory: status says no vault can be made there, and a Valet program logs it as the reason, not only 'not found'")
    func pathInAMissingDirectory() throws {
        let path = directory.path + "/no-such-directory/app.keychain"
        let status = try KeychainExecutable.run(["status"], environment: ["KEYCHAIN_PATH": path], home: directory.path)
        #expect(status.output.contains("no vault: the directory \(directory.path)/no-such-directory does not exist"), "\(status.output)")
        #expect(!status.output.contains("the first write creates it"), "\(status.output)")
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_PATH": path, "KEYCHAIN_KERNEL_KEYRING": "off", "KEYCHAIN_LOG": "1"]
        let valet = try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: environment)
        #expect(valet.status == 1 && valet.stderr.contains("no-such-directory does not exist"), "\(valet.output) \(valet.stderr)")
    }

    @Test("importing a file that is not an archive says so, before asking for a passphrase; a conflict names the item and --conflict")
    func importMessages() throws {
        #expect(try keychain(["set", "-s", "svc", "alice"], input: "s").status == 0)
        let notArchive = directory.file("notes.txt", "just some notes\n")
        let refused = try keychain(["import", notArchive])
        #expect(refused.status == 2 && refused.stderr.contains("is not a keychain archive") && !refused.stderr.contains("corrupted"), "\(refused.stderr)")

        let passphrase = ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": directory.file("archive-pw", "archive passphrase")]
        let archive = directory.path + "/items.kcx"
        #expect(try keychain(["export", archive], environment: passphrase).status == 0)
        let conflict = try keychain(["import", archive], environment: passphrase)
        #expect(conflict.status != 0, "\(conflict.stderr)")
        #expect(conflict.stderr.contains("service 'svc', account 'alice'") && conflict.stderr.contains("--conflict"), "\(conflict.stderr)")
    }

    @Test("a restore without the backup's key file names the missing file, not a corrupted vault")
    func restoreWithoutKeyFile() throws {
        #expect(try keychain(["set", "-s", "svc", "alice"], input: "s").status == 0)
        let backup = directory.path + "/backup.keychain"
        #expect(try keychain(["backup", backup]).status == 0)
        unlink(backup + ".key")
        let restored = try KeychainExecutable.run(["restore", "--vault", directory.vaultPath("other.keychain"), backup], home: directory.path)
        #expect(restored.status != 0 && restored.stderr.contains("\(backup).key, which is missing") && !restored.stderr.contains("corrupted"), "\(restored.stderr)")
    }

    @Test("remove of a missing item explains as get does; a backup into a directory asks for a file name")
    func removeAndBackupMessages() throws {
        #expect(try keychain(["set", "-s", "svc", "alice"], input: "s").status == 0)
        let missing = try keychain(["remove", "-s", "svc", "bob"])
        #expect(missing.status == 1 && missing.stderr.contains("not found"), "\(missing.stderr)")
        let folder = directory.path + "/backups"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let backup = try keychain(["backup", folder + "/"])
        #expect(backup.status == 2 && backup.stderr.contains("is a directory") && backup.stderr.contains("name the file"), "\(backup.stderr)")
    }
}
