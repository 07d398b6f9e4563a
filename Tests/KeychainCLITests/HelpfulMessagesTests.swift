import Foundation
import KeychainTestSupport
import Testing

/// Messages that say what happened and what to do, where a generic one misled.
@Suite("Messages that say what happened and what to do")
struct HelpfulMessagesTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath) }

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
