/// The command table: every command's row, in the order help lists them, and the options every
/// command takes. Parsing, help, completions, the manual page and dispatch all read it; a new
/// command is a row in a file of its own concern, added here.
enum CommandTable {
    static let global: [OptionSpec] = [
        .value("vault", short: "v", "PATH", "the vault file (default: $KEYCHAIN_PATH, else $XDG_DATA_HOME/keychain/default.keychain)"),
        .value("backend", "STORE", "vault (default, or $KEYCHAIN_BACKEND) or secret-service (GNOME Keyring, KWallet, KeePassXC)", choices: ["vault", "secret-service"]),
        .flag("help", short: "h", "show help for the command"),
    ]
    static let json = OptionSpec.flag("json", short: "j", "print structured output (never secrets) as JSON")

    static let all: [Command] =
        ItemCommands.all + VaultCommands.all + TransferCommands.all + DocumentationCommands.all + [
            StatusCommand.command,
            SyncCommand.command,
            ServeCommand.command,
        ] + LoginCommands.all
}
