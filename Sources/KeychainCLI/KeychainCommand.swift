import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import KeychainCore

/// The `keychain` command: parses `arguments` (without the program name), runs the command,
/// and returns the exit status. Errors go to standard error in one line, never with a secret.
public enum KeychainCommand {
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        let terminal = Terminal()
        guard let name = arguments.first, !name.hasPrefix("-") || ["--help", "-h", "--version"].contains(name) else {
            if arguments.isEmpty {
                terminal.writeError(Help.overview())
                return ExitCode.usage.rawValue
            }
            terminal.writeError("keychain: unknown command '\(arguments[0])'\n\(Help.hint)")
            return ExitCode.usage.rawValue
        }
        if name == "--help" || name == "-h" || name == "help" {
            if name == "help", arguments.count > 1, let command = Commands.all.first(where: { $0.name == arguments[1] }) {
                terminal.write(Help.text(for: command))
            } else {
                terminal.write(Help.overview())
            }
            return ExitCode.success.rawValue
        }
        if name == "--version" || name == "version" {
            terminal.write("keychain \(Help.version)\n")
            return ExitCode.success.rawValue
        }
        guard let command = Commands.all.first(where: { $0.name == name }) else {
            terminal.writeError("keychain: unknown command '\(name)'\n\(Help.hint)")
            return ExitCode.usage.rawValue
        }
        let rest = Array(arguments.dropFirst())
        let parsed: ParsedArguments
        do {
            parsed = try parse(rest, options: command.options + Commands.global, positionals: command.positionals,
                               optionalPositionals: command.optionalPositionals)
        } catch {
            if rest.contains("--help") || rest.contains("-h") {
                terminal.write(Help.text(for: command))
                return ExitCode.success.rawValue
            }
            terminal.writeError("keychain \(name): \(error)\n\(Help.usage(for: command))")
            return ExitCode.usage.rawValue
        }
        if parsed.has("help") {
            terminal.write(Help.text(for: command))
            return ExitCode.success.rawValue
        }
        do {
            return try command.run(Context(environment: environment, arguments: parsed)).rawValue
        } catch {
            terminal.writeError("keychain \(name): \(error.message)\n")
            return error.code.rawValue
        }
    }
}

extension KeychainCommand {
    /// Parses a command line as ``run(_:environment:)`` would, and resolves its item address,
    /// without running anything: for the fuzz target. Whether it parsed. Not API.
    @_spi(Fuzzing) public static func parseOnly(_ arguments: [String]) -> Bool {
        guard let name = arguments.first, let command = Commands.all.first(where: { $0.name == name }) else { return false }
        do {
            let parsed = try parse(Array(arguments.dropFirst()), options: command.options + Commands.global,
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
