import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The `keychain` command: parses `arguments` (without the program name), runs the command,
/// and returns the exit status. Errors go to standard error in one line, never with a secret.
package enum KeychainCommand {
    /// The program's entry point: guards the standard descriptors, makes the process
    /// non-dumpable, takes the arguments from
    /// the raw `argv` (refusing bytes that are not UTF-8, which would otherwise all become
    /// U+FFFD and name one item), and runs them.
    package static func main() -> Int32 {
        Terminal.guardStandardDescriptors()
        // A reader that went away is a write that failed (exit 4, as the README says), not a
        // signal that ends the command halfway with 141.
        SystemCall.ignoreSignal(SIGPIPE)
        // Keys and secrets pass through this process: no core dump of it, no tracing.
        ProcessHygiene.keepKeysInMemory()
        var arguments: [String] = []
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index], let text = String(validatingCString: pointer) else {
                Terminal().writeError("keychain: argument \(index) is not valid UTF-8 text; names and options must be UTF-8\n")
                return ExitCode.usage.rawValue
            }
            arguments.append(text)
        }
        // A short-lived command's OpenSSL is KeychainCore's alone, except sync's: its TLS goes
        // through libcurl and keeps the system's policy from openssl.cnf.
        if commandFirst(arguments).first != "sync" { OpenSSLConfiguration.setUpForShortLivedProgram() }
        return run(arguments)
    }

    /// Runs one command line (without the program name) and returns its exit status. Global
    /// options (`--vault`, `--backend`) may come before the command or after it, as with git.
    package static func run(_ arguments: [String], environment: [String: String] = ProcessEnvironment.current) -> Int32 {
        let terminal = Terminal()
        do {
            return try dispatch(commandFirst(arguments), environment: environment, terminal: terminal).rawValue
        } catch {
            terminal.writeError("keychain\(error.command.map { " " + $0 } ?? ""): \(error.message)\n")
            return error.code.rawValue
        }
    }

    private static func dispatch(_ arguments: [String], environment: [String: String], terminal: Terminal) throws(CommandFailure) -> ExitCode {
        guard let name = arguments.first else {
            terminal.writeError(Help.overview())
            return .usage
        }
        if name == "--help" || name == "-h" || name == "help" {
            guard arguments.count > 1 else {
                try terminal.write(Help.overview())
                return .success
            }
            guard arguments.count == 2, let command = CommandTable.all.first(where: { $0.name == arguments[1] }) else {
                throw CommandFailure("unknown command '\(arguments.dropFirst().joined(separator: " "))'\n\(Help.hint)", code: .usage)
            }
            try terminal.write(Help.text(for: command))
            return .success
        }
        if name == "--version" || name == "version" {
            try terminal.write("keychain \(Help.version)\n")
            return .success
        }
        guard let command = CommandTable.all.first(where: { $0.name == name }) else {
            if commandFirst(arguments + ["command"]).first == "command" {
                throw CommandFailure("no command after '\(arguments.joined(separator: " "))'\n\(Help.hint)", code: .usage)
            }
            let hint = Suggestion.hint(name, among: CommandTable.all.map(\.name))
            throw CommandFailure("unknown command '\(name)'\(hint)\n\(Help.hint)", code: .usage)
        }
        let rest = Array(arguments.dropFirst())
        let parsed: ParsedArguments
        do {
            parsed = try parse(
                rest, options: command.options + CommandTable.global, positionals: command.positionals,
                optionalPositionals: command.optionalPositionals)
        } catch {
            // A help flag counts only among the options, not after `--`.
            if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
                try terminal.write(Help.text(for: command))
                return .success
            }
            var hint = ""
            if case .unknownOption(let option) = error, option.hasPrefix("--") {
                let known = (command.options + CommandTable.global).map { "--" + $0.name }
                hint = Suggestion.hint(String(option.prefix { $0 != "=" }), among: known)
            }
            throw CommandFailure("\(error)\(hint)\n\(Help.usage(for: command))", code: .usage, command: name)
        }
        if parsed.has("help") {
            try terminal.write(Help.text(for: command))
            return .success
        }
        let context = Context(environment: environment, arguments: parsed)
        // Whatever the command's outcome: a `get` that found nothing still starts the agent.
        defer { if !(name == "sync" && ["run", "leave", "init", "join"].contains(parsed.positionals.first)) { SyncAgent.afterCommand(context, command: name) } }
        do {
            return ReadFreshness.checked(try command.run(context), context, command: name)
        } catch {
            throw ReadFreshness.checked(error, context, command: name).in(name)
        }
    }
}

extension KeychainCommand {
    /// The command line with the options given before the command moved after it
    /// (`keychain --vault X get ...` is `keychain get --vault X ...`, and so is `keychain -i
    /// Druidia get Skroob` for `-i`): global options, and any command's options that are
    /// spelt and take a value alike in every command that has them. Stops at the first
    /// argument that is none of these, so a mistyped one is reported; the command's own
    /// parser then refuses an option it does not take.
    static func commandFirst(_ arguments: [String]) -> [String] {
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-"), arguments[index] != "--" {
            let argument = arguments[index]
            let name = argument.hasPrefix("--") ? String(argument.dropFirst(2).prefix { $0 != "=" }) : nil
            let short = argument.count == 2 && !argument.hasPrefix("--") ? argument.last : nil
            guard name != nil || short != nil, name != "help", short != "h", let takesValue = leadingOptionTakesValue(name: name, short: short) else { break }
            index += takesValue && !argument.contains("=") ? 2 : 1
        }
        guard index > 0, index < arguments.count else { return arguments }
        return [arguments[index]] + arguments[..<index] + arguments[(index + 1)...]
    }

    /// Whether the option spelt `--name` or `-short` takes a value, when every command that has
    /// it (and the global options) agree; nil when none has it or they disagree.
    private static func leadingOptionTakesValue(name: String?, short: Character?) -> Bool? {
        let specs = (CommandTable.global + CommandTable.all.flatMap(\.options)).filter { ($0.name == name && name != nil) || ($0.short == short && short != nil) }
        let kinds = Set(specs.map { if case .value = $0.kind { true } else { false } })
        return kinds.count == 1 ? kinds.first : nil
    }

    /// Parses a command line as ``run(_:environment:)`` would, and resolves its item address,
    /// without running anything: for the fuzz target. Whether it parsed. Not API.
    @_spi(Fuzzing) public static func parseOnly(_ arguments: [String]) -> Bool {
        guard let name = arguments.first, let command = CommandTable.all.first(where: { $0.name == name }) else { return false }
        do {
            let parsed = try parse(
                Array(arguments.dropFirst()), options: command.options + CommandTable.global,
                positionals: command.positionals, optionalPositionals: command.optionalPositionals)
            guard command.options.contains(where: { $0.name == "identifier" }) else { return true }
            let address = try ItemAddress(parsed, requireTarget: false)
            _ = try address.attributes(key: parsed.positionals.first)
            return true
        } catch {
            return false
        }
    }
}
