import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCLI

/// Completions and the manual page come from the command table, so every command and option
/// is in them.
@Suite("Shell completions and the manual page")
struct DocumentationTests {
    let directory = TemporaryDirectory()

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    @Test("--version, the manual page and the CHANGELOG's newest release name the same version")
    func oneVersion() throws {
        #expect(try keychain(["--version"]).output == "keychain \(Help.version)\n")
        #expect(try keychain(["man"]).output.contains("keychain \(Help.version)"))
        let changelog = try String(
            contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../CHANGELOG.md").standardizedFileURL.path, encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(newest?.hasPrefix("## \(Help.version)") == true, "\(newest ?? "no release")")
    }

    @Test("the common flags have short forms: -i, -s, -a, -v, -j, -h")
    func shortOptions() throws {
        let vault = directory.path + "/short.keychain"
        #expect(try keychain(["set", "-i", "Demo", "-v", vault, "greeting"], input: "hunter2").status == 0)
        let got = try keychain(["get", "-i", "Demo", "-v", vault, "greeting"])
        #expect(got.status == 0 && got.output == "hunter2\n", "\(got.stderr)")
        #expect(try keychain(["set", "-s", "svc", "-a", "acct", "-v", vault], input: "raw").status == 0)
        let listed = try keychain(["list", "-j", "-v", vault])
        #expect(listed.status == 0 && listed.output.contains("\"acct\""), "\(listed.output)")
        #expect(try keychain(["get", "-h"]).output.contains("-i, --identifier ID"))
        #expect(try keychain(["get", "-x", "k"]).status == 2)
    }

    @Test("every command and every option is in each shell's completions and in the manual page; bash parses its script")
    func everythingIsDocumented() throws {
        let bash = try keychain(["completion", "bash"]), zsh = try keychain(["completion", "zsh"]), fish = try keychain(["completion", "fish"])
        let manual = try keychain(["man"])
        for result in [bash, zsh, fish, manual] { #expect(result.status == 0) }
        for command in CommandTable.all {
            #expect(bash.output.contains(command.name) && zsh.output.contains("'\(command.name):") && fish.output.contains("-a \(command.name) "), "\(command.name)")
            #expect(manual.output.contains(".B \(command.name.replacingOccurrences(of: "-", with: "\\-"))"), "\(command.name) in the manual")
            for option in command.options + CommandTable.global {
                let zshSpec = option.short.map { "{-\($0),--\(option.name)}" } ?? "'--\(option.name)"
                #expect(
                    bash.output.contains("--\(option.name)") && zsh.output.contains(zshSpec) && fish.output.contains("-l \(option.name)"),
                    "\(command.name) --\(option.name)")
                if let short = option.short {
                    #expect(
                        bash.output.contains(" -\(short)") && fish.output.contains("-l \(option.name) -s \(short)")
                            && manual.output.contains("\\-\(short), \\-\\-\(option.name.replacingOccurrences(of: "-", with: "\\-"))"),
                        "\(command.name) -\(short)")
                }
            }
        }
        let file = directory.file("completion.bash", bash.output)
        let syntax = try Subprocess.run("/bin/bash", ["-n", file], environment: ["PATH": "/usr/bin:/bin"])
        #expect(syntax.status == 0, "\(syntax.stderr)")
        #expect(try keychain(["completion", "tcsh"]).status == 2)
    }
}
