import Foundation
import KeychainTestSupport
import Testing

/// The command's output is checked, its input is exact, and its listings cannot be forged.
@Suite("The command checks what it writes and what it is given")
struct CommandHygieneTests {
    let directory = TemporaryDirectory()
    var vault: String { directory.vaultPath() }

    /// Runs `script` in bash with `$K` the keychain binary and `$V` the vault.
    func shell(_ script: String, input: String = "") throws -> CommandResult {
        try Subprocess.run(
            "/bin/bash", ["-c", script],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_DATA_HOME": directory.path + "/data",
                "KEYCHAIN_KERNEL_KEYRING": "off", "K": KeychainExecutable.path, "V": vault,
            ], input: Data(input.utf8))
    }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    @Test("output that cannot be written is a failure: closed standard output, a full disk")
    func outputErrorsFail() throws {
        #expect(try keychain(["set", "--vault", vault, "--service", "s", "a"], input: "v").status == 0)
        let closed = try shell(#""$K" get --vault "$V" --service s a >&-"#)
        #expect(closed.status == 4 && closed.stderr.contains("standard output is closed"), "\(closed.stderr)")
        let full = try shell(#""$K" get --vault "$V" --service s a > /dev/full"#)
        #expect(full.status == 4 && full.stderr.contains("cannot write the output"), "\(full.stderr)")
        let list = try shell(#""$K" list --vault "$V" > /dev/full"#)
        #expect(list.status == 4, "\(list.stderr)")
    }

    @Test("a pipe whose reader went away is output that cannot be written: exit 4 with the reason, not a signal")
    func closedPipeExitsFour() throws {
        #expect(try keychain(["set", "--vault", vault, "--service", "s", "a"], input: "v").status == 0)
        // The reader (true) is gone before the command writes; SIGPIPE as a shell leaves it by default.
        let result = try shell(#"{ sleep 0.3; env --default-signal=PIPE "$K" get --vault "$V" --service s a; echo "exit=$?" >&2; } | true"#)
        #expect(result.stderr.contains("exit=4") && result.stderr.contains("cannot write the output"), "\(result.stderr)")
    }

    @Test("a generated password nobody could see is not stored")
    func generateToAFullDisk() throws {
        let full = try shell(#""$K" generate --vault "$V" --service s g > /dev/full"#)
        #expect(full.status == 4, "\(full.stderr)")
        #expect(try keychain(["contains", "--vault", vault, "--service", "s", "g"]).status == 1, "nothing was stored")
    }

    @Test("a closed standard output is not taken by the vault file")
    func closedDescriptorsAreGuarded() throws {
        #expect(try shell(#"printf v | "$K" set --vault "$V" --service s a >&-"#).status == 0)
        let read = try keychain(["get", "--vault", vault, "--service", "s", "a"])
        #expect(read.status == 0 && read.output == "v\n", "the vault is intact: \(read.stderr)")
        let integrity = try shell(#""$K" status --vault "$V" 2>&1 >/dev/null <&-; echo "exit=$?""#)
        #expect(integrity.output.contains("exit=0"), "\(integrity.output)")
    }

    @Test("arguments that are not UTF-8 are refused, never folded into U+FFFD")
    func invalidUTF8IsRefused() throws {
        #expect(try keychain(["set", "--vault", vault, "--service", "s", "\u{FFFD}"], input: "replacement").status == 0)
        for bytes in [#"$'\xff'"#, #"$'\xfe'"#, #"$'\xc3'"#] {
            let result = try shell(#"printf other | "$K" set --vault "$V" --service s "# + bytes)
            #expect(result.status == 2 && result.stderr.contains("not valid UTF-8"), "\(bytes): \(result.stderr)")
        }
        let kept = try keychain(["get", "--vault", vault, "--service", "s", "\u{FFFD}"])
        #expect(kept.output == "replacement\n", "the U+FFFD item was not overwritten")
    }

    @Test("list escapes control characters, so a label cannot forge a row or drive the terminal")
    func listEscapesControlCharacters() throws {
        let label = "ok\n\u{1B}[31mforged\trow\\"
        #expect(try keychain(["set", "--vault", vault, "--service", "s", "--label", label, "a"], input: "v").status == 0)
        let list = try keychain(["list", "--vault", vault])
        #expect(list.status == 0)
        #expect(list.output.split(separator: "\n").count == 1, "one item, one line: \(list.output)")
        #expect(!list.output.contains("\u{1B}") && list.output.contains(#"label=ok\n\u{1b}[31mforged\trow\\"#), "\(list.output)")
    }

    @Test("help, --, empty names and empty paths: usage errors where something is wrong")
    func argumentEdgeCases() throws {
        let afterDashes = try keychain(["get", "--vault", vault, "--", "--help", "extra"])
        #expect(afterDashes.status == 2 && afterDashes.output.isEmpty, "after --, --help is an argument: \(afterDashes.output)")
        #expect(try keychain(["help", "nosuch"]).status == 2)
        #expect(try keychain(["help", "get"]).status == 0)
        let emptyAccount = try keychain(["get", "--vault", vault, "--service", "s", "--account", ""])
        #expect(emptyAccount.status == 2 && emptyAccount.stderr.contains("--account is empty"), "\(emptyAccount.stderr)")
        #expect(try keychain(["get", "--vault", vault, "--service", "", "a"]).status == 2)
        let emptyVault = try keychain(["get", "--vault", "", "--service", "s", "a"])
        #expect(emptyVault.status == 2 && emptyVault.stderr.contains("--vault is empty"), "\(emptyVault.stderr)")
    }
}

@Suite("The command never replaces or drops what it was not told to")
struct CommandSafetyTests {
    let directory = TemporaryDirectory()

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: directory.vaultPath()) }

    @Test("generate refuses to replace a stored password without --force")
    func generateKeepsExisting() throws {
        let first = try keychain(["generate", "--identifier", "Druidia", "Skroob"])
        #expect(first.status == 0)
        let again = try keychain(["generate", "--identifier", "Druidia", "Skroob"])
        #expect(again.status == 2 && again.output.isEmpty && again.stderr.contains("--force"), "\(again.stderr)")
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).output == first.output, "the first password is kept")
        let forced = try keychain(["generate", "--force", "--identifier", "Druidia", "Skroob"])
        #expect(forced.status == 0 && forced.output != first.output)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).output == forced.output)
    }

    @Test("a Valet address and raw attributes together are a usage error naming both")
    func contradictoryAddresses() throws {
        for raw in ["--service", "--server"] {
            let result = try keychain(["set", "--identifier", "Demo", raw, "rawsvc", "k"], input: "v")
            #expect(result.status == 2 && result.stderr.contains("--identifier") && result.stderr.contains(raw), "\(result.stderr)")
        }
        #expect(try keychain(["list"]).output.isEmpty, "nothing was stored")
    }
}
