import FoundationEssentials
import KeychainCore
import ValetNaming

#if canImport(Glibc)
    import Glibc
#endif

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

enum Commands {
    static let global: [OptionSpec] = [
        .value("vault", short: "v", "PATH", "the vault file (default: $KEYCHAIN_PATH, else $XDG_DATA_HOME/keychain/default.keychain)"),
        .value("backend", "STORE", "vault (default, or $KEYCHAIN_BACKEND) or secret-service (GNOME Keyring, KWallet, KeePassXC)", choices: ["vault", "secret-service"]),
        .flag("help", short: "h", "show help for the command"),
    ]
    static let json = OptionSpec.flag("json", short: "j", "print structured output (never secrets) as JSON")
    static let accept = OptionSpec.flag(
        "accept", "confirm this copy as the vault's current one when this boot's record of it is gone (asks for the passphrase)")
    static let binary = OptionSpec.flag("binary", "raw bytes: set stores standard input exactly; get prints the bytes with no newline")

    static let all: [Command] = [
        Command(
            name: "set", summary: "store a secret read from standard input (or typed at a no-echo prompt)",
            positionals: [], optionalPositionals: ["KEY"],
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
            positionals: [], optionalPositionals: ["KEY"], options: ItemAddress.options + [binary],
            examples: ["keychain get --identifier Druidia Skroob", "TOKEN=$(keychain get --service api.example.com --account deploy)"],
            notes: "Exit status 1 if there is no such item.", run: get),
        Command(
            name: "contains", summary: "exit 0 if an item exists, 1 if not (reads no secret)",
            positionals: [], optionalPositionals: ["KEY"], options: ItemAddress.options,
            examples: ["keychain contains --identifier Druidia Skroob && echo present"], notes: nil, run: contains),
        Command(
            name: "remove", summary: "delete an item (exit 1 if there was none)",
            positionals: [], optionalPositionals: ["KEY"], options: ItemAddress.options,
            examples: ["keychain remove --identifier Druidia Skroob"], notes: nil, run: remove),
        Command(
            name: "list", summary: "list a Valet's keys, or items with their non-secret attributes",
            positionals: [], optionalPositionals: [], options: ItemAddress.options + [json],
            examples: ["keychain list --identifier Druidia", "keychain list --json", "keychain list --service api.example.com"],
            notes: "Without --identifier or --shared-group, lists every item the filters match.", run: list),
        Command(
            name: "clear", summary: "delete every key of one Valet",
            positionals: [], optionalPositionals: [], options: ItemAddress.options,
            examples: ["keychain clear --identifier Druidia"], notes: nil, run: clear),
        Command(
            name: "unlock", summary: "unlock with the passphrase for all your processes: whenUnlocked items until idle, afterFirstUnlock until reboot",
            positionals: [], optionalPositionals: [],
            options: [
                .value("timeout", "SECONDS", "how long whenUnlocked items stay open to your processes without use (default 300, or $KEYCHAIN_UNLOCK_TIMEOUT; 0: this command only)")
            ],
            examples: ["keychain unlock", "KEYCHAIN_PASSPHRASE_FILE=~/.config/pw keychain unlock --timeout 900"],
            notes:
                "As an unlocked phone opens its items to every app: after this, any process of yours reads whenUnlocked items without the passphrase until `keychain lock`, the idle timeout (each use pushes it back) or reboot, and afterFirstUnlock items until reboot. whenPasscodeSetThisDeviceOnly and access-controlled items still need the passphrase in the process that reads them.",
            run: unlock),
        Command(
            name: "lock", summary: "lock for all your processes: close whenUnlocked and afterFirstUnlock items (as a reboot would)",
            positionals: [], optionalPositionals: [], options: [],
            examples: ["keychain lock"], notes: nil, run: lock),
        Command(
            name: "passwd", summary: "set, change or remove the vault passphrase",
            positionals: [], optionalPositionals: [], options: [.flag("remove", "remove the passphrase (destroys whenPasscodeSetThisDeviceOnly items)")],
            examples: [
                "keychain passwd", "keychain passwd --remove",
                "KEYCHAIN_PASSPHRASE_FILE=old KEYCHAIN_NEW_PASSPHRASE_FILE=new keychain passwd",
            ],
            notes:
                "The current passphrase comes from KEYCHAIN_PASSPHRASE_FILE, $CREDENTIALS_DIRECTORY/keychain-passphrase or a prompt; the new one from KEYCHAIN_NEW_PASSPHRASE_FILE, standard input, or a prompt typed twice. Changing a passphrase re-wraps the master key; a vault's first passphrase also gives it new keys (every item re-sealed). `keychain rekey` rotates them on demand.",
            run: passwd),
        Command(
            name: "rekey", summary: "give the vault new keys: every item re-sealed, the passphrase unchanged",
            positionals: [], optionalPositionals: [], options: [],
            examples: ["keychain rekey", "KEYCHAIN_PASSPHRASE_FILE=~/.config/pw keychain rekey"],
            notes:
                "After it, an old copy of the vault's header opened with an old passphrase opens nothing written later. Your other processes must unlock again. A vault without a passphrase gets new keys when it gets one (keychain passwd).",
            run: rekey),
        Command(
            name: "generate", summary: "print a new Safari-style password (xxx-xxx-xxx-xxx), or store it with an item address",
            positionals: [], optionalPositionals: ["KEY"],
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
        Command(
            name: "verify", summary: "check the vault file and try every item; exit 4 if anything is damaged",
            positionals: [], optionalPositionals: [], options: [json, accept],
            examples: ["keychain verify", "KEYCHAIN_PASSPHRASE_FILE=~/.config/pw keychain verify --json", "keychain verify --accept"],
            notes:
                "Reads only, unless --accept. Items whose class is locked are counted as not tried: unlock first to try them all. The rollback line says whether this boot's record (in the kernel keyring) vouches that the file is the vault's newest copy; when the vault was written in this boot and the record is gone, writes wait until you check the vault and confirm this copy with --accept (with the passphrase, where the vault has one).",
            run: verify),
        Command(
            name: "recover", summary: "copy every item that still opens into a new vault",
            positionals: ["FILE"], optionalPositionals: [], options: [],
            examples: ["keychain recover ~/recovered.keychain"],
            notes:
                "For a damaged vault: the new vault takes the same passphrase (or a key file when there is none). Items under an access control and items that do not open stay behind, counted.",
            run: recover),
        Command(
            name: "backup", summary: "write a consistent copy of the vault (and its key file, without a passphrase) to a new file",
            positionals: ["FILE"], optionalPositionals: [], options: [],
            examples: ["keychain backup ~/backups/keychain-$(date +%F).keychain"],
            notes:
                "Safe while programs use the vault: one snapshot, what is still in the -wal file included. Never writes over a file. Without a passphrase the backup's FILE.key opens it: keep both, and keep them private; with one, the passphrase does.",
            run: backup),
        Command(
            name: "restore", summary: "put a backup in place of a missing vault",
            positionals: ["FILE"], optionalPositionals: [], options: [],
            examples: ["keychain restore ~/backups/keychain-2026-12-01.keychain"],
            notes: "Refuses when a vault (or a key file) is already in place: move it away first. The backup is checked before anything is written.",
            run: restore),
        Command(
            name: "export", summary: "write the items that may leave this machine to a new passphrase-protected archive",
            positionals: ["FILE"], optionalPositionals: [],
            options: [.flag("skip-locked", "leave the items of a locked class behind (and say how many) instead of failing")],
            examples: ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE=~/.config/archive-pw keychain export ~/keychain.skcx"],
            notes:
                "ThisDeviceOnly items and items under an access control never leave: the command says how many stayed behind. An item of a locked class (whenUnlocked after the idle timeout) makes it fail with status 3, writing nothing, unless --skip-locked. The archive is sealed with scrypt and AES-256-GCM under its own passphrase (KEYCHAIN_ARCHIVE_PASSPHRASE_FILE, or typed twice). Never writes over a file.",
            run: export),
        Command(
            name: "import", summary: "merge an archive's items into the store, all or nothing",
            positionals: ["FILE"], optionalPositionals: [],
            options: [
                .value(
                    "conflict", "RULE", "for an item already there: refuse (default: change nothing), keep (the existing one) or replace",
                    choices: ItemTransfer.ConflictRule.allCases.map(\.rawValue))
            ],
            examples: ["keychain import ~/keychain.skcx --conflict keep"],
            notes: "A damaged, cut or wrongly opened archive changes nothing.",
            run: importArchive),
        Command(
            name: "migrate", summary: "move the items from one store to the other (vault, secret-service), all or nothing",
            positionals: [], optionalPositionals: [],
            options: [
                .value("from", "STORE", "vault or secret-service"), .value("to", "STORE", "vault or secret-service"),
                .value("conflict", "RULE", "refuse (default), keep or replace", choices: ItemTransfer.ConflictRule.allCases.map(\.rawValue)),
                .flag("keep-source", "copy instead of move: leave the items in the source too"),
                .flag("skip-locked", "leave the items of a locked class behind (and say how many) instead of failing"),
            ],
            examples: ["keychain migrate --from secret-service --to vault", "keychain migrate --from vault --to secret-service --keep-source"],
            notes:
                "Only this tool's items move (other programs' Secret Service items stay theirs); ThisDeviceOnly and access-controlled items stay behind, and the command says how many. An item of a locked class makes it fail with status 3, moving nothing, unless --skip-locked.",
            run: migrate),
        Command(
            name: "completion", summary: "print shell completions (bash, zsh or fish), generated from this command's own table",
            positionals: ["SHELL"], optionalPositionals: [], options: [],
            examples: ["keychain completion bash > /etc/bash_completion.d/keychain", "keychain completion fish > ~/.config/fish/completions/keychain.fish"],
            notes: nil, run: completion, positionalChoices: ["bash", "zsh", "fish"]),
        Command(
            name: "man", summary: "print the manual page (keychain.1), generated from the same table as --help",
            positionals: [], optionalPositionals: [], options: [],
            examples: ["keychain man > /usr/local/share/man/man1/keychain.1"], notes: nil, run: manual),
        Command(
            name: "status", summary: "where the vault is, whether it is locked, what is available",
            positionals: [], optionalPositionals: [], options: [json],
            examples: ["keychain status", "keychain status --json"], notes: nil, run: status),
        SyncCommand.command,
        ServeCommand.command,
    ]

    // MARK: - Item commands

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
                throw CommandFailure("nothing was changed: the stored item stays (--force replaces it without asking)", code: .failure)
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
        let items = try context.store { () throws(StoreError) in
            try store.copyMatching(Query(address.itemClass, attributes: attributes, limit: .one, returnData: true, returnAttributes: false))
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
        let found = try context.store { () throws(StoreError) in try store.contains(Query(address.itemClass, attributes: attributes)) }
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
        let rows = items.map { ItemDescription(item: $0) }
        if json {
            try context.terminal.write(JSON.encode(rows.map(\.json)) + "\n")
        } else {
            try context.terminal.write(rows.map { $0.line + "\n" }.joined())
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

    // MARK: - Vault commands

    private static func unlock(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("unlock")
        guard vault.hasPassphrase else {
            context.terminal.writeError("keychain: this vault has no passphrase; it is always unlocked (set one with `keychain passwd`)\n")
            return .success
        }
        let passphrase = try context.passphrases.current(fromStandardInput: true)
        try context.store { () throws(StoreError) in try vault.unlock(forUser: passphrase) }
        if case .unavailable(let reason) = vault.status().kernelKeyring {
            context.terminal.writeError("keychain: unlocked in this process only: the kernel keyring is unavailable (\(reason))\n")
        }
        return .success
    }

    private static func lock(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("lock")
        vault.forgetCachedKeys()
        return .success
    }

    private static func passwd(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("passwd")
        let hasPassphrase = vault.hasPassphrase
        let current = hasPassphrase ? try context.passphrases.current(prompt: "Current passphrase: ") : nil
        if context.arguments.has("remove") {
            guard hasPassphrase else {
                context.terminal.writeError("keychain: this vault has no passphrase\n")
                return .success
            }
            try context.store { () throws(StoreError) in try vault.changePassphrase(from: current, to: nil) }
            return .success
        }
        let new = try context.passphrases.new()
        try context.store { () throws(StoreError) in try vault.changePassphrase(from: current, to: new) }
        context.terminal.writeError("keychain: passphrase \(hasPassphrase ? "changed" : "set"); whenUnlocked items stay locked for your other processes until `keychain unlock`\n")
        return .success
    }

    private static func verify(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("verify")
        if context.arguments.has("accept") {
            // The owner's word takes the passphrase itself, not keys another process left.
            if vault.hasPassphrase {
                let current = try context.passphrases.current()
                try context.store { () throws(StoreError) in try vault.unlock(passphrase: current) }
            }
            try context.store { () throws(StoreError) in try vault.acceptCurrentGeneration() }
            context.terminal.writeError("keychain: this copy of the vault is now the current one for this boot\n")
        }
        try context.ensureAvailable(nil)
        let report = try context.store { () throws(StoreError) in try vault.verify() }
        if context.arguments.has("json") {
            try context.terminal.write(
                JSON.object([
                    "integrity": .string(report.integrity), "ledger": .string(report.ledger), "items": .number(report.items), "intact": .number(report.intact),
                    "notTried": .number(report.notTried), "rollback": .string(report.rollbackCheck.description),
                    "damaged": .array(report.damaged.map { JSON.object(["row": .number(Int($0.row)), "reason": .string($0.reason)]) }),
                ]).text + "\n")
        } else {
            var text = "file:      \(report.integrity == "ok" ? "ok (SQLite's integrity check)" : report.integrity)\n"
            text += "ledger:    \(report.ledger == "ok" ? "ok (the rows are the set the vault vouches for)" : report.ledger)\n"
            text += "items:     \(report.items): \(report.intact) intact, \(report.notTried) not tried here (locked or bound elsewhere), \(report.damaged.count) damaged\n"
            for damage in report.damaged { text += "damaged:   row \(damage.row): \(damage.reason)\n" }
            text += "rollback:  \(report.rollbackCheck)\n"
            try context.terminal.write(text)
        }
        return report.isSound && report.rollbackCheck != .unknown ? .success : .failure
    }

    private static func recover(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("recover")
        let file = try context.absolutePath(context.arguments.positionals[0])
        var passphrase: SecretBytes?
        if vault.hasPassphrase {
            let current = try context.passphrases.current()
            try context.store { () throws(StoreError) in try vault.unlock(passphrase: current) }
            passphrase = current
        }
        let (copied, left) = try context.store { () throws(StoreError) in try vault.recover(to: file, passphrase: passphrase) }
        context.terminal.writeError("keychain: copied \(copied) item(s) to \(file); \(left) stayed behind (under an access control, or not opening)\n")
        return .success
    }

    private static func backup(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("backup")
        let file = try context.absolutePath(context.arguments.positionals[0])
        try context.store { () throws(StoreError) in try vault.backup(to: file) }
        context.terminal.writeError("keychain: backed up \(vault.location.path) to \(file)\(vault.hasPassphrase ? "" : " and \(file).key")\n")
        return .success
    }

    private static func restore(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("restore")
        let file = try context.absolutePath(context.arguments.positionals[0])
        try context.store { () throws(StoreError) in try vault.restore(from: file) }
        context.terminal.writeError("keychain: restored \(file) to \(vault.location.path)\n")
        if vault.status().rollbackCheck == .unknown {
            context.terminal.writeError(
                "keychain: the copy was last written in this boot; writes wait until you confirm it: keychain verify --accept\n")
        }
        return .success
    }

    private static func conflictRule(_ context: Context) throws(CommandFailure) -> ItemTransfer.ConflictRule {
        guard let name = context.arguments.value("conflict") else { return .refuse }
        guard let rule = ItemTransfer.ConflictRule(rawValue: name) else {
            throw CommandFailure("--conflict must be refuse, keep or replace, not '\(name)'", code: .usage)
        }
        return rule
    }

    private static func reportLeftovers(_ leftovers: ItemArchive.Leftovers, _ context: Context) {
        guard leftovers.total > 0 else { return }
        context.terminal.writeError(
            "keychain: \(leftovers.total) item(s) stayed behind: \(leftovers.thisDeviceOnly) ThisDeviceOnly (bound to this machine), \(leftovers.accessControlled) under an access control (bound to this vault's passphrase), \(leftovers.locked) in a locked class (unlock the vault to include them)\n"
        )
    }

    /// The failure of a transfer that would leave items of a locked class behind unasked.
    private static func lockedItems(_ count: Int) -> CommandFailure {
        CommandFailure(
            "\(count) item(s) are in a locked class and cannot be read: unlock the vault (keychain unlock) first, or give --skip-locked to leave them behind; nothing was written",
            code: .locked)
    }

    private static func export(_ context: Context) throws(CommandFailure) -> ExitCode {
        let file = try context.absolutePath(context.arguments.positionals[0])
        let store = try context.store(unlocking: nil)
        let (items, leftovers) = try context.store { () throws(StoreError) in try ItemTransfer.transferableItems(of: store, skipLocked: true) }
        if leftovers.locked > 0 && !context.arguments.has("skip-locked") { throw lockedItems(leftovers.locked) }
        let passphrase = try context.passphrases.archive(confirm: true)
        let archive = try context.store { () throws(StoreError) in try ItemArchive.seal(items, passphrase: passphrase) }
        try context.store { () throws(StoreError) in try ItemArchive.write(archive, toNewFile: file) }
        context.terminal.writeError("keychain: exported \(items.count) item(s) to \(file)\n")
        reportLeftovers(leftovers, context)
        return .success
    }

    private static func importArchive(_ context: Context) throws(CommandFailure) -> ExitCode {
        let file = try context.absolutePath(context.arguments.positionals[0])
        let rule = try conflictRule(context)
        let bytes = try context.store { () throws(StoreError) in try ItemArchive.read(file: file) }
        guard ItemArchive.isArchive(bytes) else {
            throw CommandFailure("\(file) is not a keychain archive (keychain export writes them); nothing was imported", code: .usage)
        }
        let passphrase = try context.passphrases.archive(confirm: false)
        let items: [Item]
        do {
            items = try ItemArchive.open(bytes, passphrase: passphrase)
        } catch .corrupted(let why) {
            throw CommandFailure("\(file) is damaged or cut short (\(why)); nothing was imported", code: .failure)
        } catch {
            throw CommandFailure(error)
        }
        let store = try context.store(unlocking: nil)
        let outcome: ItemTransfer.Outcome
        do {
            outcome = try ItemTransfer.merge(items, into: store, rule: rule)
        } catch .duplicateItem {
            let taken = items.filter { (try? store.contains(Query(identifying: $0))) == true }
            let first = taken.first.map { ItemDescription(item: $0).name } ?? "an item"
            let more = taken.count > 1 ? " and \(taken.count - 1) more" : ""
            throw CommandFailure(
                "the store already has \(first)\(more); nothing was imported: add --conflict keep to keep the store's, or --conflict replace to take the archive's",
                code: .failure)
        } catch {
            throw CommandFailure(error)
        }
        context.terminal.writeError("keychain: imported \(file): \(outcome.added) added, \(outcome.replaced) replaced, \(outcome.kept) kept as they were\n")
        return .success
    }

    private static func migrate(_ context: Context) throws(CommandFailure) -> ExitCode {
        guard let fromName = context.arguments.value("from"), let toName = context.arguments.value("to") else {
            throw CommandFailure("give both --from and --to (vault or secret-service)", code: .usage)
        }
        guard let from = StoreKind(rawValue: fromName), let to = StoreKind(rawValue: toName) else {
            throw CommandFailure("--from and --to take vault or secret-service", code: .usage)
        }
        guard from != to else { throw CommandFailure("--from and --to name the same store (\(fromName))", code: .usage) }
        let rule = try conflictRule(context)
        let source = try context.store(of: from)
        let destination = try context.store(of: to)
        let locked = try context.store { () throws(StoreError) in try ItemTransfer.lockedItemCount(of: source) }
        if locked > 0 && !context.arguments.has("skip-locked") { throw lockedItems(locked) }
        let (outcome, leftovers) = try context.store { () throws(StoreError) in
            try ItemTransfer.move(from: source, to: destination, rule: rule, keepSource: context.arguments.has("keep-source"), skipLocked: true)
        }
        context.terminal.writeError(
            "keychain: \(context.arguments.has("keep-source") ? "copied" : "moved") from \(fromName) to \(toName): \(outcome.added) added, \(outcome.replaced) replaced, \(outcome.kept) kept as they were in \(toName)\n"
        )
        reportLeftovers(leftovers, context)
        return .success
    }

    private static func rekey(_ context: Context) throws(CommandFailure) -> ExitCode {
        let vault = try context.vaultOnly("rekey")
        guard vault.hasPassphrase else {
            throw CommandFailure("this vault has no passphrase: it gets new keys when it gets one (keychain passwd)", code: .usage)
        }
        let passphrase = try context.passphrases.current(fromStandardInput: true)
        try context.store { () throws(StoreError) in try vault.rekey(passphrase: passphrase) }
        context.terminal.writeError("keychain: every item of \(vault.location.path) is sealed under new keys\n")
        return .success
    }

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

    private static func status(_ context: Context) throws(CommandFailure) -> ExitCode {
        let kind = try context.storeKind()
        let secretService = secretServiceState(context)
        let json = context.arguments.has("json")
        guard kind == .vault else {
            if json {
                try context.terminal.write(JSON.object(["backend": .string(kind.rawValue), "secretService": .string(secretService)]).text + "\n")
            } else {
                try context.terminal.write("backend:           secret-service\nsecret service:    \(secretService)\n")
            }
            return .success
        }
        let vault = try context.vault()
        let status = vault.status()
        guard status.exists else {
            if json {
                try context.terminal.write(
                    JSON.object([
                        "backend": .string(kind.rawValue), "vault": .string(status.location.path), "exists": .bool(false),
                        "secretService": .string(secretService),
                    ]).text + "\n")
            } else {
                try context.terminal.write(
                    """
                    backend:           vault
                    vault:             \(status.location.path) (no vault yet: the first write creates it)
                    secret service:    \(secretService)\n
                    """)
            }
            return .success
        }
        let kernel: String
        switch status.kernelKeyring {
        case .available: kernel = "available"
        case .disabled: kernel = "disabled"
        case .unavailable(let reason): kernel = "unavailable (\(reason))"
        }
        let classes = status.availableClasses.map { "\($0)" }
        if json {
            let object: [String: JSON] = [
                "backend": .string(kind.rawValue), "exists": .bool(true),
                "vault": .string(status.location.path), "formatVersion": .number(status.formatVersion),
                "passphrase": .bool(status.hasPassphrase), "unlocked": .bool(status.isUnlocked),
                "userUnlockRemaining": .string(status.userUnlockRemaining ?? ""),
                "availableClasses": .array(classes.map { .string($0) }), "kernelKeyring": .string(kernel),
                "items": .number(status.itemCount), "secretService": .string(secretService),
                "rollback": .string(status.rollbackCheck.description),
            ]
            try context.terminal.write(JSON.object(object).text + "\n")
        } else {
            try context.terminal.write(
                """
                backend:           vault
                vault:             \(status.location.path)
                format version:    \(status.formatVersion)
                passphrase:        \(status.hasPassphrase ? "set" : "none (key file \(status.location.keyFilePath))")
                locked:            \(status.hasPassphrase ? (status.isUnlocked ? "no" + (status.userUnlockRemaining.map { " (unlocked for your processes, \($0) left without use)" } ?? "") : "yes") : "no (no passphrase)")
                available classes: \(classes.isEmpty ? "none" : classes.joined(separator: ", "))
                kernel keyring:    \(kernel)
                items:             \(status.itemCount)
                rollback check:    \(status.rollbackCheck)
                secret service:    \(secretService)\n
                """ + (status.machineBinding.map { "note:              \($0)\n" } ?? ""))
        }
        return .success
    }

    /// Whether a Secret Service answers here, and its default collection; bounded in time.
    private static func secretServiceState(_ context: Context) -> String {
        var environment = context.environment
        if environment["KEYCHAIN_TIMEOUT"] == nil { environment["KEYCHAIN_TIMEOUT"] = "2" }
        do {
            guard let store = try StoreKind.secretService.open(environment: environment) as? SecretServiceStore else { return "unknown" }
            let probe = try store.probe()
            return "reachable; default collection '\(probe.label)' is \(probe.locked ? "locked" : "unlocked")"
        } catch {
            return "not reachable: \(error.description)"
        }
    }
}

/// An item's non-secret attributes, for listings.
struct ItemDescription {
    let item: Item

    var json: JSON {
        let a = item.attributes
        var object: [String: JSON] = ["class": .string(item.itemClass.rawValue)]
        func put(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        put("service", a.service); put("server", a.server); put("account", a.account)
        put("accessGroup", a.accessGroup.flatMap { $0.isEmpty ? nil : $0 })
        put("accessibility", a.accessibility.map { "\($0)" }); put("label", a.label); put("comment", a.comment)
        put("protocol", a.protocol?.rawValue); put("path", a.path.flatMap { $0.isEmpty ? nil : $0 })
        if let port = a.port, port != 0 { object["port"] = .number(port) }
        if let sync = a.synchronizable { object["synchronizable"] = .bool(sync) }
        put("created", a.creationDate.map { $0.formatted(.iso8601) })
        put("modified", a.modificationDate.map { $0.formatted(.iso8601) })
        return .object(object)
    }

    /// The item as a person names it: its class, service or server, and account.
    var name: String {
        let a = item.attributes
        let place = a.service.map { "service '\(Self.escaped($0))'" } ?? a.server.map { "server '\(Self.escaped($0))'" } ?? "no service"
        return "the \(item.itemClass.rawValue) item of \(place), account '\(Self.escaped(a.account ?? ""))'"
    }

    /// One line of tab-separated fields, each escaped (``escaped(_:)``): a label or an
    /// account written by anyone cannot forge a row or send the terminal escape sequences.
    var line: String {
        let a = item.attributes
        let name = item.itemClass == .genericPassword ? (a.service ?? "") : (a.server ?? "")
        var parts = ["\(item.itemClass.rawValue)", name, a.account ?? ""]
        if item.itemClass == .internetPassword {
            // What tells one login's items apart: without them, two lines would look the same.
            if let code = a.protocol { parts.append("protocol=\(ProtocolNames.name(of: code))") }
            if let port = a.port, port != 0 { parts.append("port=\(port)") }
            if let path = a.path, !path.isEmpty { parts.append("path=\(path)") }
        }
        if let accessibility = a.accessibility { parts.append("\(accessibility)") }
        if let label = a.label { parts.append("label=\(label)") }
        return parts.map(Self.escaped).joined(separator: "\t")
    }

    /// The text with control characters (C0, DEL, C1) and backslashes written as escapes:
    /// `\t`, `\n`, `\r`, `\\`, else `\u{XX}`.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x5C: out += "\\\\"
            case 0x00..<0x20, 0x7F..<0xA0: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
