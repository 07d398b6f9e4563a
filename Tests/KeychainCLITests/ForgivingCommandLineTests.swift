import Foundation
import KeychainTestSupport
import Testing

/// The command forgives as git does: global options before or after the command, and a
/// mistyped command or option gets the nearest one offered.
@Suite("A command line that forgives")
struct ForgivingCommandLineTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    @Test("--vault and --backend before the command act as after it, in every spelling")
    func globalOptionsBeforeTheCommand() throws {
        #expect(try keychain(["--vault", vaultPath, "set", "-s", "svc", "alice"], input: "s3cret").status == 0)
        for prefix in [["--vault", vaultPath], ["--vault=\(vaultPath)"], ["-v", vaultPath], ["--backend=vault", "--vault", vaultPath], ["--backend", "vault", "-v", vaultPath]] {
            let read = try keychain(prefix + ["get", "-s", "svc", "alice"])
            #expect(read.status == 0 && read.output == "s3cret\n", "\(prefix): \(read.stderr)")
        }
        let listed = try keychain(["--vault", vaultPath, "list"])
        #expect(listed.status == 0 && listed.output.contains("alice"), "\(listed.stderr)")
        let alone = try keychain(["--vault", vaultPath])
        #expect(alone.status == 2 && alone.stderr.contains("no command after"), "\(alone.stderr)")
    }

    @Test("a command's options before the command act as after it, as --vault does: -i Druidia get Skroob")
    func commandOptionsBeforeTheCommand() throws {
        #expect(try keychain(["--vault", vaultPath, "-i", "Druidia", "set", "Skroob"], input: "12345").status == 0)
        for prefix in [["-i", "Druidia"], ["--identifier", "Druidia"], ["--identifier=Druidia"], ["-i", "Druidia", "-v", vaultPath]] {
            let read = try keychain(prefix + ["get", "Skroob"] + (prefix.contains(vaultPath) ? [] : ["--vault", vaultPath]))
            #expect(read.status == 0 && read.output == "12345\n", "\(prefix): \(read.stderr)")
        }
        let listed = try keychain(["-i", "Druidia", "--json", "list", "--vault", vaultPath])
        #expect(listed.status == 0 && listed.output == "[\"Skroob\"]\n", "\(listed.stderr)")
        let refused = try keychain(["--length", "8", "get", "-i", "Druidia", "Skroob"])
        #expect(refused.status == 2 && refused.stderr.contains("--length"), "an option the command does not take is still refused: \(refused.stderr)")
        #expect(try keychain(["-h", "get"]).status == 0, "help before the command stays help")
    }

    @Test("a mistyped command or option is answered with the nearest one")
    func didYouMean() throws {
        let accessibility = try keychain(["set", "-i", "Druidia", "Skroob", "--accessibility", "whenunlocked"], input: "s")
        #expect(accessibility.status == 2 && accessibility.stderr.contains("did you mean 'whenUnlocked'?"), "\(accessibility.stderr)")
        let raw = try keychain(["set", "-s", "svc", "alice", "--accessibility", "afterfirstunlock"], input: "s")
        #expect(raw.status == 2 && raw.stderr.contains("did you mean 'afterFirstUnlock'?"), "\(raw.stderr)")
        let command = try keychain(["gte", "-s", "svc", "alice"])
        #expect(command.status == 2 && command.stderr.contains("did you mean 'get'?"), "\(command.stderr)")
        let option = try keychain(["get", "--servce", "svc", "alice"])
        #expect(option.status == 2 && option.stderr.contains("did you mean '--service'?"), "\(option.stderr)")
        let far = try keychain(["frobnicate"])
        #expect(far.status == 2 && !far.stderr.contains("did you mean"), "no guess for what is nothing like a command: \(far.stderr)")
    }
}
