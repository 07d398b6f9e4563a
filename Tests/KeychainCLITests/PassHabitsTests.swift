import Foundation
import KeychainTestSupport
import Testing

/// What people who come from `pass` expect: a password of the length and characters they
/// choose, and a question before a typed secret replaces a stored one.
@Suite("Generating and replacing as pass users expect")
struct PassHabitsTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath) }

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

    @Test("set at a terminal asks before replacing a stored item; no leaves it (exit 0, not an error), yes and --force replace it, a pipe replaces as before")
    func setAsksBeforeReplacing() throws {
        #expect(try keychain(["set", "-s", "svc", "alice"], input: "first").status == 0)
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_KERNEL_KEYRING": "off"]
        let arguments = ["set", "--vault", vaultPath, "-s", "svc", "alice"]
        let declined = try Subprocess.runOnTerminal(
            KeychainExecutable.path, arguments, environment: environment, dialogue: [("Replace it? [y/N]", "n")])
        #expect(declined.result.status == 0 && declined.result.stderr.contains("Nothing was changed"), "declining is an answer, not an error: \(declined.result.stderr)")
        #expect(!declined.result.stderr.contains("keychain set:"), "\(declined.result.stderr)")
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
