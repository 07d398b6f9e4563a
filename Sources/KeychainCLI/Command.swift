/// One command: a row of the table that drives parsing, help and dispatch. A row names only
/// what its command has: no arguments, options or notes unless given.
struct Command: Sendable {
    let name: String
    let summary: String
    let positionals: [String]
    let optionalPositionals: [String]
    let options: [OptionSpec]
    let examples: [String]
    let notes: String?
    let run: @Sendable (Context) throws(CommandFailure) -> ExitCode
    /// The words a shell completes for the first positional argument (an action, a shell).
    let positionalChoices: [String]

    init(
        name: String, summary: String, positionals: [String] = [], optionalPositionals: [String] = [], options: [OptionSpec] = [],
        examples: [String], notes: String? = nil, run: @escaping @Sendable (Context) throws(CommandFailure) -> ExitCode,
        positionalChoices: [String] = []
    ) {
        self.name = name
        self.summary = summary
        self.positionals = positionals
        self.optionalPositionals = optionalPositionals
        self.options = options
        self.examples = examples
        self.notes = notes
        self.run = run
        self.positionalChoices = positionalChoices
    }
}
