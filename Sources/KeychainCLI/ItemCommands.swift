import FoundationEssentials
import KeychainCore
import KeychainServe
import ValetNaming

/// The commands on items: set, get, contains, remove, list, clear, and generate (which may store what it prints).
enum ItemCommands {
    static let binary = OptionSpec.flag("binary", "raw bytes: set stores standard input exactly; get prints the bytes with no newline")

    static let all: [Command] = [
        Command(
            name: "set", summary: "store a secret read from standard input (or typed at a no-echo prompt)",
            optionalPositionals: ["KEY"],
            options: ItemAddress.options + [
                binary, .value("label", "TEXT", "a label shown by listings"), .value("comment", "TEXT", "a comment"),
                .flag("force", "at a terminal, replace a stored item without asking (a pipe always replaces)"),
                .value(
                    "access-control", "CONTROL", "userPresence or devicePasscode: every read asks for the vault passphrase on the terminal (vault with a passphrase only)",
                    choices: AccessControl.allCases.map(\.description)),
            ],
            examples: [
                "printf 12345 | keychain set --identifier Druidia Skroob",
                "keychain set --service api.example.com --account deploy   # prompts for the secret",
                "printf 12345 | keychain set --service bank --account me --access-control userPresence --accessibility whenPasscodeSetThisDeviceOnly",
            ],
            notes:
                "Text input loses one trailing newline; --binary keeps every byte. The secret never goes on the command line. At a terminal, replacing a stored item asks first (--force does not).",
            run: set),
        Command(
            name: "get", summary: "print a secret",
            optionalPositionals: ["KEY"], options: ItemAddress.options + [binary],
            examples: ["keychain get --identifier Druidia Skroob", "TOKEN=$(keychain get --service api.example.com --account deploy)"],
            notes: "Exit status 1 if there is no such item.", run: get),
        Command(
            name: "contains", summary: "exit 0 if an item exists, 1 if not (reads no secret)",
            optionalPositionals: ["KEY"], options: ItemAddress.options,
            examples: ["keychain contains --identifier Druidia Skroob && echo present"], run: contains),
        Command(
            name: "remove", summary: "delete an item (exit 1 if there was none)",
            optionalPositionals: ["KEY"], options: ItemAddress.options,
            examples: ["keychain remove --identifier Druidia Skroob"], run: remove),
        Command(
            name: "list", summary: "list a Valet's keys, or items with their non-secret attributes",
            options: ItemAddress.options + [CommandTable.json],
            examples: ["keychain list --identifier Druidia", "keychain list --json", "keychain list --service api.example.com"],
            notes:
                "Without --identifier or --shared-group, lists every item the filters match. Items other programs stored through keychain serve list as secret-service, COLLECTION/ID, label and attributes; read one with keychain get --access-group org.freedesktop.secrets.secret --service COLLECTION --account ID.",
            run: list),
        Command(
            name: "clear", summary: "delete every key of one Valet",
            options: ItemAddress.options,
            examples: ["keychain clear --identifier Druidia"], run: clear),
        Command(
            name: "generate", summary: "print a new Safari-style password (xxx-xxx-xxx-xxx), or store it with an item address",
            optionalPositionals: ["KEY"],
            options: ItemAddress.options + [
                .flag("force", "replace an item already stored there (without it, generate refuses)"),
                .value("length", "N", "that many characters, with no dashes (4 to 1024)"),
                .value(
                    "characters", "SET", "safari (the default), alphanumeric, printable (with symbols) or digits",
                    choices: PasswordGenerator.Characters.allCases.map(\.rawValue)),
            ],
            examples: [
                "keychain generate", "keychain generate --identifier Druidia Skroob   # stores it, then prints it",
                "keychain generate --force --identifier Druidia Skroob   # replaces the stored one",
                "keychain generate --length 24 --characters printable",
            ],
            notes:
                "By default twelve characters from a 55-letter alphabet without look-alikes, in groups of three, with a lowercase letter, an uppercase letter and a digit; about 69 bits. With --length or --characters: that many characters (default 20) from the set, each of its classes at least once.",
            run: generate),
    ]

    private static func key(_ context: Context) -> String? { context.arguments.positionals.first }

    private static func set(_ context: Context) throws(CommandFailure) -> ExitCode {
        let address = try ItemAddress(context.arguments, requireTarget: true)
        var attributes = try address.attributes(key: key(context))
        if attributes.account == nil && address.itemClass == .genericPassword && !address.isValet {
            throw CommandFailure("missing argument KEY (or --account)", code: .usage)
        }
        attributes.accessibility = attributes.accessibility ?? .whenUnlocked
        attributes.label = context.arguments.value("label")
        attributes.comment = context.arguments.value("comment")
        var accessControl: AccessControl?
        if let name = context.arguments.value("access-control") {
            guard let control = AccessControl.allCases.first(where: { $0.description == name }) else {
                throw CommandFailure("unknown access control '\(name)' (userPresence, biometryAny, biometryCurrentSet, devicePasscode)", code: .usage)
            }
            accessControl = control
        }
        let terminal = context.terminal
        // An access-controlled item needs the passphrase in this process (the master key vouches
        // for the presence key), as the passcode class always does.
        let store = try context.store(unlocking: accessControl != nil ? .whenPasscodeSetThisDeviceOnly : attributes.accessibility)
        var value: SecretBytes
        if terminal.stdinIsTerminal {
            // As `pass insert` does: a person at a terminal is asked before a secret is replaced
            // (a script's pipe overwrites, as it always did).
            let target = address.item(key: key(context), attributes: attributes, value: SecretBytes([]))
            if !context.arguments.has("force"), try context.store({ () throws(StoreError) in try store.contains(Query(identifying: target)) }),
                !terminal.confirm("An item is already stored there. Replace it? [y/N] ")
            {
                // The person's answer, not a failure: the item stays as asked.
                terminal.writeError("Nothing was changed: the stored item stays (--force replaces it without asking).\n")
                return .success
            }
            guard let typed = try terminal.prompt("Secret: ") else { throw CommandFailure("no terminal to read the secret from", code: .usage) }
            value = typed
        } else {
            value = try terminal.readStandardInput()
            if !context.arguments.has("binary") { value = value.droppingTrailingNewline() }
        }
        guard value.count > 0 else { throw CommandFailure("the secret is empty; nothing was stored", code: .usage) }
        var item = address.item(key: key(context), attributes: attributes, value: value)
        item.attributes.accessControl = accessControl
        try context.store { () throws(StoreError) in try store.upsert(item) }
        return .success
    }

    private static func get(_ context: Context) throws(CommandFailure) -> ExitCode {
        let address = try ItemAddress(context.arguments, requireTarget: true)
        let attributes = try address.attributes(key: key(context))
        let store = try context.store(unlocking: attributes.accessibility)
        let query = Query(address.itemClass, attributes: attributes, limit: .one, returnData: true, returnAttributes: false)
        var items: [Item]
        do {
            items = try store.copyMatching(query)
        } catch .itemNotFound where attributes.synchronizable == true && SyncFirstRound.awaited(context, command: "get") {
            // The agent started a moment ago has applied what the group holds: once more.
            items = try context.store { () throws(StoreError) in try store.copyMatching(query) }
        } catch {
            throw CommandFailure(error)
        }
        guard let value = items.first?.value else { return .notFound }
        try context.terminal.write(value)
        if !context.arguments.has("binary") { try context.terminal.write("\n") }
        return .success
    }

    private static func contains(_ context: Context) throws(CommandFailure) -> ExitCode {
        let address = try ItemAddress(context.arguments, requireTarget: true)
        let attributes = try address.attributes(key: key(context))
        let store = try context.store(unlocking: nil)
        let query = Query(address.itemClass, attributes: attributes)
        var found = try context.store { () throws(StoreError) in try store.contains(query) }
        if !found, attributes.synchronizable == true, SyncFirstRound.awaited(context, command: "contains") {
            found = try context.store { () throws(StoreError) in try store.contains(query) }
        }
        return found ? .success : .notFound
    }

    private static func remove(_ context: Context) throws(CommandFailure) -> ExitCode {
        let address = try ItemAddress(context.arguments, requireTarget: true)
        let attributes = try address.attributes(key: key(context))
        if !address.isValet && attributes.account == nil {
            throw CommandFailure("name one item: give KEY or --account (use clear for a whole Valet)", code: .usage)
        }
        let store = try context.store(unlocking: nil)
        let removed = try context.store { () throws(StoreError) in try store.delete(Query(address.itemClass, attributes: attributes)) }
        // Several items can share a server and account (other protocols, ports or paths).
        if removed > 1 { context.terminal.writeError("keychain: removed \(removed) items\n") }
        guard removed > 0 else { throw CommandFailure(StoreError.itemNotFound) }
        return .success
    }

    private static func clear(_ context: Context) throws(CommandFailure) -> ExitCode {
        let address = try ItemAddress(context.arguments, requireTarget: true)
        guard address.isValet else { throw CommandFailure("clear empties one Valet: give --identifier or --shared-group", code: .usage) }
        let store = try context.store(unlocking: nil)
        try context.store { () throws(StoreError) in try store.delete(Query(address.itemClass, attributes: address.attributes)) }
        return .success
    }

    private static func list(_ context: Context) throws(CommandFailure) -> ExitCode {
        let address = try ItemAddress(context.arguments, requireTarget: false)
        let store = try context.store(unlocking: address.attributes.accessibility)
        let query = Query(
            address.isValet || address.attributes.service != nil || address.attributes.server != nil ? address.itemClass : nil,
            attributes: address.attributes)
        var items: [Item]
        do { items = try store.copyMatching(query) } catch .itemNotFound { items = [] } catch { throw CommandFailure(error) }
        let json = context.arguments.has("json")
        if address.isValet {
            let keys = items.compactMap { $0.attributes.account }.filter { $0 != ValetAddress.canaryKey }.sorted()
            try context.terminal.write(json ? JSON.encode(keys) + "\n" : keys.map { ItemDescription.escaped($0) + "\n" }.joined())
            return .success
        }
        // Other programs' items (keychain serve) list one line each, unless their rows are asked
        // for by access group.
        let (served, others) = address.attributes.accessGroup == nil ? ServedItemRow.split(items) : ([], items)
        let rows = others.map { ItemDescription(item: $0) }
        if json {
            try context.terminal.write(JSON.encode(rows.map(\.json) + served.map(ServedItemDescription.json)) + "\n")
        } else {
            try context.terminal.write((rows.map(\.line) + served.map(ServedItemDescription.line)).map { $0 + "\n" }.joined())
        }
        return .success
    }

    private static func generate(_ context: Context) throws(CommandFailure) -> ExitCode {
        let arguments = context.arguments
        let password: String
        if arguments.value("length") == nil && arguments.value("characters") == nil {
            password = PasswordGenerator.safari()
        } else {
            let names = PasswordGenerator.Characters.allCases.map(\.rawValue)
            let name = arguments.value("characters") ?? PasswordGenerator.Characters.safari.rawValue
            guard let characters = PasswordGenerator.Characters(rawValue: name) else {
                throw CommandFailure(
                    "unknown character set '\(name)'\(Suggestion.hint(name, among: names)); use one of \(names.joined(separator: ", "))", code: .usage)
            }
            guard let length = Int(arguments.value("length") ?? "20") else {
                throw CommandFailure("--length takes a number of characters, not '\(arguments.value("length") ?? "")'", code: .usage)
            }
            password = try context.store { () throws(StoreError) in try PasswordGenerator.password(length: length, characters: characters) }
        }
        let addressed = ["identifier", "shared-group", "service", "server"].contains { arguments.value($0) != nil }
        guard addressed else {
            try context.terminal.write(password + "\n")
            return .success
        }
        let address = try ItemAddress(arguments, requireTarget: true)
        var attributes = try address.attributes(key: key(context))
        attributes.accessibility = attributes.accessibility ?? .whenUnlocked
        let store = try context.store(unlocking: attributes.accessibility)
        let item = address.item(key: key(context), attributes: attributes, value: SecretBytes(utf8: password))
        let replace = arguments.has("force")
        if !replace, try context.store({ () throws(StoreError) in try store.contains(Query(identifying: item)) }) {
            throw CommandFailure("an item is already stored there; a new password replaces it only with --force", code: .usage)
        }
        // Shown before it is stored: a password nobody could see must never replace anything.
        try context.terminal.write(password + "\n")
        try context.store { () throws(StoreError) in replace ? try store.upsert(item) : try store.add(item) }
        return .success
    }
}
