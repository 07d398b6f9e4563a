import Foundation
import KeychainTestSupport
import Testing

/// Messages that say what happened and what to do, where a generic one misled.
@Suite("Messages that say what happened and what to do")
struct HelpfulMessagesTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    func keychain(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws -> CommandResult {
        try KeychainExecutable.run(
            [arguments[0], "--vault", vaultPath] + arguments.dropFirst(), input: Data(input.utf8), environment: environment, home: directory.path)
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

/// What people who come from `pass` expect: a password of the length and characters they
/// choose, and a question before a typed secret replaces a stored one.
@Suite("Generating and replacing as pass users expect")
struct PassHabitsTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    func keychain(_ arguments: [String], input: String = "") throws -> CommandResult {
        try KeychainExecutable.run([arguments[0], "--vault", vaultPath] + arguments.dropFirst(), input: Data(input.utf8), home: directory.path)
    }

    @Test("generate --length and --characters give that many characters of that set, every class present; nonsense is refused")
    func generateLengthAndCharacters() throws {
        let printable = try keychain(["generate", "--length", "32", "--characters", "printable"])
        let password = printable.output.dropLast()
        #expect(printable.status == 0 && password.count == 32, "\(printable.output)\(printable.stderr)")
        #expect(password.contains(where: \.isLowercase) && password.contains(where: \.isUppercase) && password.contains(where: \.isNumber))
        #expect(password.contains { $0.isPunctuation || $0.isSymbol }, "a symbol: \(password)")
        let pin = try keychain(["generate", "--characters", "digits", "--length", "6"])
        #expect(pin.status == 0 && pin.output.dropLast().count == 6 && pin.output.dropLast().allSatisfy(\.isNumber), "\(pin.output)")
        #expect(try keychain(["generate", "--length", "2"]).status == 2)
        let unknown = try keychain(["generate", "--characters", "alphanumerc"])
        #expect(unknown.status == 2 && unknown.stderr.contains("did you mean 'alphanumeric'?"), "\(unknown.stderr)")
        let stored = try keychain(["generate", "--length", "40", "-s", "svc", "alice"])
        #expect(stored.status == 0 && stored.output.count == 41)
        #expect(try keychain(["get", "-s", "svc", "alice"]).output == stored.output, "stored as printed")
    }

    @Test("set at a terminal asks before replacing a stored item; no leaves it, yes and --force replace it, a pipe replaces as before")
    func setAsksBeforeReplacing() throws {
        #expect(try keychain(["set", "-s", "svc", "alice"], input: "first").status == 0)
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_KERNEL_KEYRING": "off"]
        let arguments = ["set", "--vault", vaultPath, "-s", "svc", "alice"]
        let declined = try Subprocess.runOnTerminal(
            KeychainExecutable.path, arguments, environment: environment, dialogue: [("Replace it? [y/N]", "n")])
        #expect(declined.result.status == 4 && declined.result.stderr.contains("nothing was changed"), "\(declined.result.stderr)")
        #expect(try keychain(["get", "-s", "svc", "alice"]).output == "first\n")
        let accepted = try Subprocess.runOnTerminal(
            KeychainExecutable.path, arguments, environment: environment, dialogue: [("Replace it? [y/N]", "y"), ("Secret:", "second")])
        #expect(accepted.result.status == 0, "\(accepted.result.stderr)")
        #expect(try keychain(["get", "-s", "svc", "alice"]).output == "second\n")
        let forced = try Subprocess.runOnTerminal(KeychainExecutable.path, arguments + ["--force"], environment: environment, dialogue: [("Secret:", "third")])
        #expect(forced.result.status == 0 && !forced.terminal.contains("Replace it?"), "\(forced.terminal)")
        #expect(try keychain(["get", "-s", "svc", "alice"]).output == "third\n")
        #expect(try keychain(["set", "-s", "svc", "alice"], input: "piped").status == 0, "a pipe replaces without asking")
        #expect(try keychain(["get", "-s", "svc", "alice"]).output == "piped\n")
    }
}

/// One passphrase rule for every command: its file, the credentials directory, standard input
/// when it is not a terminal (for the passphrase the command is about), then a prompt.
@Suite("One passphrase rule for every command")
struct PassphraseRuleTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    func keychain(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws -> CommandResult {
        try KeychainExecutable.run(
            [arguments[0], "--vault", vaultPath] + arguments.dropFirst(), input: Data(input.utf8), environment: environment, home: directory.path)
    }

    @Test("passwd, unlock, rekey, export and import each take their passphrase from a pipe; nothing piped still says where a passphrase can come from")
    func pipedPassphrases() throws {
        #expect(try keychain(["set", "-s", "svc", "alice"], input: "s3cret").status == 0)
        #expect(try keychain(["passwd"], input: "correct horse\n").status == 0)
        let unlocked = try keychain(["unlock"], input: "correct horse\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        let rekeyed = try keychain(["rekey"], input: "correct horse\n")
        #expect(rekeyed.status == 0, "\(rekeyed.stderr)")
        let withFile = ["KEYCHAIN_PASSPHRASE_FILE": directory.file("pw", "correct horse")]
        #expect(try keychain(["get", "-s", "svc", "alice"], environment: withFile).output == "s3cret\n", "the rekeyed vault opens with the piped passphrase")
        let archive = directory.path + "/items.kcx"
        let exported = try keychain(["export", archive], input: "archive words\n", environment: withFile)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(try keychain(["remove", "-s", "svc", "alice"], environment: withFile).status == 0)
        let imported = try keychain(["import", archive], input: "archive words\n", environment: withFile)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try keychain(["get", "-s", "svc", "alice"], environment: withFile).output == "s3cret\n")
        let nothing = try keychain(["unlock"])
        #expect(nothing.status == 3 && nothing.stderr.contains("pipe it on standard input"), "\(nothing.stderr)")
        let twoLines = try keychain(["passwd"], input: "new words\nnew words\n", environment: withFile)
        #expect(twoLines.status == 2 && twoLines.stderr.contains("more than one line"), "never a passphrase nobody can type: \(twoLines.stderr)")
        #expect(try keychain(["get", "-s", "svc", "alice"], environment: withFile).output == "s3cret\n", "the passphrase is unchanged")
    }
}
