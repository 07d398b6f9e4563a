import FoundationEssentials
import KeychainCore

/// The commands that move items between files and stores: backup and restore of the vault file, export and
/// import of passphrase-sealed archives, and migration from one store to the other.
enum TransferCommands {
    static let all: [Command] = [
        Command(
            name: "backup", summary: "write a consistent copy of the vault (and its key file, without a passphrase) to a new file",
            positionals: ["FILE"],
            examples: ["keychain backup ~/backups/keychain-$(date +%F).keychain"],
            notes:
                "Safe while programs use the vault: one snapshot, what is still in the -wal file included. Never writes over a file. Without a passphrase the backup's FILE.key opens it: keep both, and keep them private; with one, the passphrase does.",
            run: backup),
        Command(
            name: "restore", summary: "put a backup in place of a missing vault",
            positionals: ["FILE"],
            examples: ["keychain restore ~/backups/keychain-2026-12-01.keychain"],
            notes: "Refuses when a vault (or a key file) is already in place: move it away first. The backup is checked before anything is written.",
            run: restore),
        Command(
            name: "export", summary: "write the items that may leave this machine to a new passphrase-protected archive",
            positionals: ["FILE"],
            options: [.flag("skip-locked", "leave the items of a locked class behind (and say how many) instead of failing")],
            examples: ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE=~/.config/archive-pw keychain export ~/keychain.skcx"],
            notes:
                "ThisDeviceOnly items and items under an access control never leave: the command says how many stayed behind. An item of a locked class (whenUnlocked after the idle timeout) makes it fail with status 3, writing nothing, unless --skip-locked. The archive is sealed with scrypt and AES-256-GCM under its own passphrase (KEYCHAIN_ARCHIVE_PASSPHRASE_FILE, or typed twice). Never writes over a file.",
            run: export),
        Command(
            name: "import", summary: "merge an archive's items into the store, all or nothing",
            positionals: ["FILE"],
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
            options: [
                .value("from", "STORE", "vault or secret-service"), .value("to", "STORE", "vault or secret-service"),
                .value("conflict", "RULE", "refuse (default), keep or replace", choices: ItemTransfer.ConflictRule.allCases.map(\.rawValue)),
                .flag("keep-source", "copy instead of move: leave the items in the source too"),
                .flag("skip-locked", "leave the items of a locked class (with --foreign: a locked collection) behind (and say how many) instead of failing"),
                .flag("foreign", "switch providers: every program's items of every collection, into the vault as keychain serve keeps them, or back"),
                .flag(
                    "switch",
                    "with --foreign: make the move the change of provider, none left behind: into the vault, install keychain serve waiting for the name, move, stop the old provider (the bus hands the name over), and fail naming anything it took meanwhile; back, stop keychain serve and remove its activation file first"
                ),
                .flag(
                    "unlock",
                    "with --foreign: first open the provider's locked collections: gnome-keyring's with their password (its own unlock; KEYCHAIN_PROVIDER_PASSWORD_FILE, standard input or a prompt), KWallet's through the Secret Service's Unlock (kwalletd asks, or opens a wallet pam_kwallet opened); KeePassXC's are opened in KeePassXC"
                ),
            ],
            examples: [
                "keychain migrate --from secret-service --to vault", "keychain migrate --from vault --to secret-service --keep-source",
                "keychain migrate --foreign --from secret-service --to vault --switch   # from gnome-keyring to keychain serve",
                "keychain migrate --foreign --from vault --to secret-service --keep-source",
            ],
            notes:
                "Without --foreign, only this tool's items move (other programs' Secret Service items stay theirs); ThisDeviceOnly and access-controlled items stay behind, and the command says how many. An item of a locked class makes it fail with status 3, moving nothing, unless --skip-locked. With --foreign, to switch from gnome-keyring (KWallet, KeePassXC) to keychain serve: every item of every persistent collection of the provider, with its label, attributes, secret and content type, goes into the vault in one write (the default collection becomes login, each other one the vault collection of its label, made if missing); the memory-only session collection stays behind; a locked collection fails with status 3 unless --skip-locked; an item whose attributes one of its vault collection has exactly is a conflict, two items of one identity in the source are each kept, and an item the vault holds as it is counts as moved (so running it again finishes a move that stopped early); only items read back from the vault leave the provider. With --switch the move is the change of provider: keychain serve --install, keychain serve waiting in the bus's queue for the name (no provider lets another take it), the move from the old provider by its unique name while its signals are watched (what arrives meanwhile is moved again), then the old provider, if it is the user's own, holds nothing in its memory-only session collection and kept no locked collection (--skip-locked), stopped (its systemd user unit, else SIGTERM) so that the bus hands the name over (an item stored over or changed after it was listed stays in it, and the command fails naming it); it exits 0 only once keychain serve of this vault owns the name and nothing the old provider took is left in it, and otherwise names what stayed and how to finish. Back (--from vault --to secret-service; with --switch, the activation file and unit are removed and keychain serve of this vault stopped first, else start the old provider, then stop keychain serve): each served item into the provider's collection of the same label (login: its default one), created where missing and the provider allows it, undone if anything fails; the vault's rows go in one write after. Refused while keychain serve of this same vault is the provider.",
            run: migrate),
    ]

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
        if context.arguments.has("switch") && !context.arguments.has("foreign") {
            throw CommandFailure("--switch changes the Secret Service provider: give it with --foreign", code: .usage)
        }
        if context.arguments.has("foreign") { return try ProviderSwitch.migrate(context, from: from, to: to, rule: rule) }
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
}
