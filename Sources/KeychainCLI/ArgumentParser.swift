/// One option a command accepts: a row of the table that drives parsing and help alike.
struct OptionSpec: Sendable {
    enum Kind: Sendable { case flag, value(String) }
    let name: String
    let short: Character?
    let kind: Kind
    let help: String
    /// The values a shell completes for it (empty: any value).
    var choices: [String] = []

    static func flag(_ name: String, short: Character? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .flag, help: help)
    }
    static func value(_ name: String, short: Character? = nil, _ placeholder: String, _ help: String, choices: [String] = []) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .value(placeholder), help: help, choices: choices)
    }

    /// `-i, --identifier ID`: the short form first, when there is one.
    var usage: String {
        let long: String
        switch kind {
        case .flag: long = "--\(name)"
        case .value(let placeholder): long = "--\(name) \(placeholder)"
        }
        return short.map { "-\($0), " + long } ?? long
    }
}

/// What a command line said: options by name, flags, and positional arguments.
struct ParsedArguments: Equatable, Sendable {
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    func value(_ name: String) -> String? { values[name] }
    func has(_ name: String) -> Bool { flags.contains(name) }
}

enum ParseError: Error, Equatable, CustomStringConvertible {
    case unknownOption(String)
    case missingValue(String)
    case unexpectedValue(String)
    case repeatedOption(String)
    case tooManyArguments(String)
    case missingArgument(String)

    var description: String {
        switch self {
        case .unknownOption(let o): "unknown option '\(o)'"
        case .missingValue(let o): "option '--\(o)' needs a value"
        case .unexpectedValue(let o): "option '--\(o)' takes no value"
        case .repeatedOption(let o): "option '--\(o)' is given twice"
        case .tooManyArguments(let a): "unexpected argument '\(a)'"
        case .missingArgument(let a): "missing argument \(a)"
        }
    }
}

/// Parses `arguments` against `options`: `--name value`, `--name=value`, `-x` for a short
/// flag, `-x value` for a short option, and `--` to end options. Positionals are checked against `positionals` (names of required
/// ones) and `optionalPositionals`.
func parse(_ arguments: [String], options: [OptionSpec], positionals: [String], optionalPositionals: [String] = []) throws(ParseError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    var onlyPositionals = false
    func spec(named name: String) -> OptionSpec? { options.first { $0.name == name } }
    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
            parsed.positionals.append(argument)
            continue
        }
        if argument == "--" {
            onlyPositionals = true
            continue
        }
        var name: String
        var inlineValue: String?
        if argument.hasPrefix("--") {
            name = String(argument.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
        } else {
            guard argument.count == 2, let match = options.first(where: { $0.short == argument.last }) else {
                throw .unknownOption(argument)
            }
            name = match.name
        }
        guard let option = spec(named: name) else { throw .unknownOption(argument) }
        switch option.kind {
        case .flag:
            if inlineValue != nil { throw .unexpectedValue(name) }
            parsed.flags.insert(name)
        case .value:
            if parsed.values[name] != nil { throw .repeatedOption(name) }
            if let inlineValue {
                parsed.values[name] = inlineValue
            } else {
                guard index < arguments.count else { throw .missingValue(name) }
                parsed.values[name] = arguments[index]
                index += 1
            }
        }
    }
    if parsed.positionals.count < positionals.count {
        throw .missingArgument(positionals[parsed.positionals.count])
    }
    if parsed.positionals.count > positionals.count + optionalPositionals.count {
        throw .tooManyArguments(parsed.positionals[positionals.count + optionalPositionals.count])
    }
    return parsed
}
