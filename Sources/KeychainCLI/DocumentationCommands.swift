import KeychainCore

/// The commands that print what the table documents: shell completions and the manual page.
enum DocumentationCommands {
    static let all: [Command] = [
        Command(
            name: "completion", summary: "print shell completions (bash, zsh or fish), generated from this command's own table",
            positionals: ["SHELL"],
            examples: ["keychain completion bash > /etc/bash_completion.d/keychain", "keychain completion fish > ~/.config/fish/completions/keychain.fish"],
            run: completion, positionalChoices: ["bash", "zsh", "fish"]),
        Command(
            name: "man", summary: "print the manual page (keychain.1), generated from the same table as --help",
            examples: ["keychain man > /usr/local/share/man/man1/keychain.1"], run: manual),
    ]

    private static func completion(_ context: Context) throws(CommandFailure) -> ExitCode {
        let shell = context.arguments.positionals[0]
        guard let script = Documentation.completion(for: shell) else {
            throw CommandFailure("no completions for '\(shell)': bash, zsh or fish", code: .usage)
        }
        try context.terminal.write(script)
        return .success
    }

    private static func manual(_ context: Context) throws(CommandFailure) -> ExitCode {
        try context.terminal.write(Documentation.manualPage())
        return .success
    }
}
