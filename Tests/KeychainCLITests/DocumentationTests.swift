import Foundation
import Testing
@testable import KeychainCLI
import KeychainTestSupport

/// Completions and the manual page come from the command table, so every command and option
/// is in them.
@Suite("Shell completions and the manual page")
struct DocumentationTests {
    let directory = TemporaryDirectory()

    func keychain(_ arguments: [String]) throws -> CommandResult { try KeychainExecutable.run(arguments, home: directory.path) }

    @Test("every command and every option is in each shell's completions and in the manual page; bash parses its script")
    func everythingIsDocumented() throws {
        let bash = try keychain(["completion", "bash"]), zsh = try keychain(["completion", "zsh"]), fish = try keychain(["completion", "fish"])
        let manual = try keychain(["man"])
        for result in [bash, zsh, fish, manual] { #expect(result.status == 0) }
        for command in Commands.all {
            #expect(bash.output.contains(command.name) && zsh.output.contains("'\(command.name):") && fish.output.contains("-a \(command.name) "), "\(command.name)")
            #expect(manual.output.contains(".B \(command.name.replacingOccurrences(of: "-", with: "\\-"))"), "\(command.name) in the manual")
            for option in command.options + Commands.global {
                #expect(bash.output.contains("--\(option.name)") && zsh.output.contains("'--\(option.name)") && fish.output.contains("-l \(option.name)"),
                        "\(command.name) --\(option.name)")
            }
        }
        let file = directory.file("completion.bash", bash.output)
        let syntax = try Subprocess.run("/bin/bash", ["-n", file], environment: ["PATH": "/usr/bin:/bin"])
        #expect(syntax.status == 0, "\(syntax.stderr)")
        #expect(try keychain(["completion", "tcsh"]).status == 2)
    }
}
