/// Help text, generated from the same table that drives parsing.
enum Help {
    /// The release, the one place it is written: `--version`, the manual page and the
    /// CHANGELOG's newest heading (checked by a test) agree with it.
    static let version = "0.13.1"
    static let hint = "Run `keychain --help` for the commands.\n"

    static func overview() -> String {
        let width = CommandTable.all.map(\.name.count).max() ?? 0
        let lines = CommandTable.all.map { "  " + $0.name.padded(to: width + 2) + $0.summary }
        return """
            keychain: keep secrets in an encrypted vault, the Keychain way (Valet-compatible).

            Usage: keychain COMMAND [OPTIONS] [KEY]

            Commands:
            \(lines.joined(separator: "\n"))

            Secrets are read from standard input or a no-echo prompt, never from the command line.
            Items are addressed as a Valet's (--identifier ID KEY) or by raw attributes (--service S --account A).

            Exit status: 0 ok/found, 1 not found, 2 usage error, 3 locked or wrong passphrase, 4 other error.

            Example:
              printf 12345 | keychain set --identifier Druidia Skroob
              keychain get --identifier Druidia Skroob

            Run `keychain COMMAND --help` for a command's options.

            """
    }

    static func usage(for command: Command) -> String {
        let arguments = command.positionals.map { " \($0)" }.joined() + command.optionalPositionals.map { " [\($0)]" }.joined()
        return "Usage: keychain \(command.name) [OPTIONS]\(arguments)\n"
    }

    static func text(for command: Command) -> String {
        let options = command.options + CommandTable.global
        let width = options.map(\.usage.count).max() ?? 0
        var text = "keychain \(command.name): \(command.summary)\n\n" + usage(for: command) + "\nOptions:\n"
        for option in options {
            text += "  " + option.usage.padded(to: width + 2) + option.help + "\n"
        }
        if let notes = command.notes { text += "\n" + notes + "\n" }
        text += "\nExample" + (command.examples.count > 1 ? "s" : "") + ":\n" + command.examples.map { "  \($0)\n" }.joined()
        return text
    }
}

extension String {
    /// The string followed by spaces up to `width` characters (never cut).
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
