import Testing

@testable import KeychainCLI

@Suite("The argument parser")
struct ArgumentParserTests {
    let options: [OptionSpec] = [.value("identifier", short: "i", "ID", ""), .flag("json", short: "j", ""), .flag("help", short: "h", "")]

    struct Case: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let expected: Result<ParsedArguments, ParseError>
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["--identifier", "Druidia", "Skroob"], expected: .success(ParsedArguments(values: ["identifier": "Druidia"], positionals: ["Skroob"]))),
        Case(
            arguments: ["Skroob", "--identifier=Druidia", "--json"],
            expected: .success(ParsedArguments(values: ["identifier": "Druidia"], flags: ["json"], positionals: ["Skroob"]))),
        Case(arguments: ["-h"], expected: .success(ParsedArguments(flags: ["help"]))),
        Case(arguments: ["-i", "Druidia", "-j", "Skroob"], expected: .success(ParsedArguments(values: ["identifier": "Druidia"], flags: ["json"], positionals: ["Skroob"]))),
        Case(arguments: ["-i"], expected: .failure(.missingValue("identifier"))),
        Case(arguments: ["-i", "a", "--identifier", "b"], expected: .failure(.repeatedOption("identifier"))),
        Case(arguments: ["--", "--identifier"], expected: .success(ParsedArguments(positionals: ["--identifier"]))),
        Case(arguments: ["--identifier="], expected: .success(ParsedArguments(values: ["identifier": ""]))),
        Case(arguments: ["--nope"], expected: .failure(.unknownOption("--nope"))),
        Case(arguments: ["-x"], expected: .failure(.unknownOption("-x"))),
        Case(arguments: ["--identifier"], expected: .failure(.missingValue("identifier"))),
        Case(arguments: ["--json=1"], expected: .failure(.unexpectedValue("json"))),
        Case(arguments: ["--identifier", "a", "--identifier", "b"], expected: .failure(.repeatedOption("identifier"))),
        Case(arguments: ["one", "two"], expected: .failure(.tooManyArguments("two"))),
    ]

    @Test("parses options, values, flags and positionals, and names each mistake", arguments: cases)
    func parsing(_ testCase: Case) {
        let result = Result { () throws(ParseError) -> ParsedArguments in
            try parse(testCase.arguments, options: options, positionals: [], optionalPositionals: ["KEY"])
        }
        #expect(result == testCase.expected)
    }

    @Test("a missing required positional is named")
    func missingPositional() {
        #expect(throws: ParseError.missingArgument("KEY")) { try parse([], options: options, positionals: ["KEY"]) }
    }

    @Test("every command's table is well formed: unique names, an example each")
    func commandTable() {
        let names = CommandTable.all.map(\.name)
        #expect(Set(names).count == names.count)
        for command in CommandTable.all {
            let optionNames = (command.options + CommandTable.global).map(\.name)
            #expect(Set(optionNames).count == optionNames.count, "\(command.name) repeats an option")
            #expect(!command.examples.isEmpty, "\(command.name) has no example")
            #expect(command.examples.allSatisfy { $0.contains("keychain \(command.name)") || $0.contains("keychain " + command.name) })
        }
    }
}

extension ParsedArguments {
    init(values: [String: String] = [:], flags: Set<String> = [], positionals: [String] = []) {
        self.init()
        self.values = values
        self.flags = flags
        self.positionals = positionals
    }
}
