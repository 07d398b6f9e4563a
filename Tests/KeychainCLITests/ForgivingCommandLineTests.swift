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

    @Test("a mistyped command or option is answered with the nearest one")
    func didYouMean() throws {
        let command = try keychain(["gte", "-s", "svc", "alice"])
        #expect(command.status == 2 && command.stderr.contains("did you mean 'get'?"), "\(command.stderr)")
        let option = try keychain(["get", "--servce", "svc", "alice"])
        #expect(option.status == 2 && option.stderr.contains("did you mean '--service'?"), "\(option.stderr)")
        let far = try keychain(["frobnicate"])
        #expect(far.status == 2 && !far.stderr.contains("did you mean"), "no guess for what is nothing like a command: \(far.stderr)")
    }
}
