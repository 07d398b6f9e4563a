/// One command: a row of the table that drives parsing, help and dispatch.
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
    var positionalChoices: [String] = []
}
