import Foundation
import KeychainTestSupport
import Testing

/// Bash completion as a person meets it: each word completed by the script the command
/// generates, in a real bash.
@Suite("Shell completions complete what comes next")
struct CompletionTests {
    let directory = TemporaryDirectory()

    /// What bash offers after `words` (the last one being completed).
    func complete(_ words: [String]) throws -> [String] {
        let script = try KeychainExecutable.run(["completion", "bash"], home: directory.path)
        #expect(script.status == 0)
        let file = directory.file("keychain.bash", script.output)
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = "source \(file); COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _keychain; printf '%s\\n' \"${COMPREPLY[@]}\""
        let result = try Subprocess.run("/bin/bash", ["-c", program], environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path])
        #expect(result.status == 0, "\(result.stderr)")
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test("commands, an option's values, a command's positional words and help's command names are completed; options where options go")
    func bashCompletes() throws {
        #expect(try complete(["keychain", "ge"]) == ["get", "generate"])
        #expect(try complete(["keychain", "completion", ""]) == ["bash", "zsh", "fish"])
        #expect(try complete(["keychain", "sync", ""]) == ["init", "invite", "join", "run", "status", "remove-device", "resolve", "leave"])
        #expect(try complete(["keychain", "sync", "rem"]) == ["remove-device"])
        #expect(try complete(["keychain", "list", "--backend", ""]) == ["vault", "secret-service"])
        #expect(try complete(["keychain", "set", "--accessibility", "after"]) == ["afterFirstUnlock", "afterFirstUnlockThisDeviceOnly"])
        #expect(try complete(["keychain", "set", "--accessibility", "al"]).isEmpty, "what a Valet refuses is not offered")
        #expect(try complete(["keychain", "set", "--protocol", "http"]).contains("https"))
        #expect(try complete(["keychain", "generate", "--characters", ""]) == ["safari", "alphanumeric", "printable", "digits"])
        #expect(try complete(["keychain", "help", "rek"]) == ["rekey"])
        #expect(try complete(["keychain", "get", "--ser"]) == ["--service", "--server"])
    }
}
