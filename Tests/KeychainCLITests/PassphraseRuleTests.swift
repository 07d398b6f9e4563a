import Foundation
import KeychainTestSupport
import Testing

/// One passphrase rule for every command: its file, the credentials directory, standard input
/// when it is not a terminal (for the passphrase the command is about), then a prompt.
@Suite("One passphrase rule for every command")
struct PassphraseRuleTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath) }

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
