import FoundationEssentials
import KeychainCore

/// The commands only a vault has: its lock state, its passphrase and keys, and its repair.
enum VaultCommands {
    static let accept = OptionSpec.flag(
        "accept", "confirm this copy as the vault's current one when this boot's record of it is gone (asks for the passphrase)")

    static let all: [Command] = [
        Command(
            name: "unlock", summary: "unlock with the passphrase for all your processes: whenUnlocked items until idle, afterFirstUnlock until reboot",
            options: [
                .value("timeout", "SECONDS", "how long whenUnlocked items stay open to your processes without use (default 300, or $KEYCHAIN_UNLOCK_TIMEOUT; 0: this command only)")
            ],
            examples: ["keychain unlock", "KEYCHAIN_PASSPHRASE_FILE=~/.config/pw keychain unlock --timeout 900"],
            notes:
                "As an unlocked phone opens its items to every app: after this, any process of yours reads whenUnlocked items without the passphrase until `keychain lock`, the idle timeout (each use pushes it back) or reboot, and afterFirstUnlock items until reboot. whenPasscodeSetThisDeviceOnly and access-controlled items still need the passphrase in the process that reads them.",
            run: unlock),
        Command(
            name: "lock", summary: "lock for all your processes: close whenUnlocked and afterFirstUnlock items (as a reboot would)",
            examples: ["keychain lock"], run: lock),
        Command(
            name: "passwd", summary: "set, change or remove the vault passphrase",
            options: [.flag("remove", "remove the passphrase (destroys whenPasscodeSetThisDeviceOnly items)")],
            examples: [
                "keychain passwd", "keychain passwd --remove",
                "KEYCHAIN_PASSPHRASE_FILE=old KEYCHAIN_NEW_PASSPHRASE_FILE=new keychain passwd",
            ],
            notes:
                "The current passphrase comes from KEYCHAIN_PASSPHRASE_FILE, $CREDENTIALS_DIRECTORY/keychain-passphrase or a prompt; the new one from KEYCHAIN_NEW_PASSPHRASE_FILE, standard input, or a prompt typed twice. Changing a passphrase re-wraps the master key; a vault's first passphrase also gives it new keys (every item re-sealed). `keychain rekey` rotates them on demand.",
            run: passwd),
        Command(
            name: "rekey", summary: "give the vault new keys: every item re-sealed, the passphrase unchanged",
            examples: ["keychain rekey", "KEYCHAIN_PASSPHRASE_FILE=~/.config/pw keychain rekey"],
            notes:
                "After it, an old copy of the vault's header opened with an old passphrase opens nothing written later. Your other processes must unlock again. A vault without a passphrase gets new keys when it gets one (keychain passwd).",
            run: rekey),
        Command(
            name: "verify", summary: "check the vault file and try every item; exit 4 if anything is damaged",
            options: [CommandTable.json, accept],
            examples: ["keychain verify", "KEYCHAIN_PASSPHRASE_FILE=~/.config/pw keychain verify --json", "keychain verify --accept"],
            notes:
                "Reads only, unless --accept. Items whose class is locked are counted as not tried: unlock first to try them all. The rollback line says whether this boot's record (in the kernel keyring) vouches that the file is the vault's newest copy; when the vault was written in this boot and the record is gone, writes wait until you check the vault and confirm this copy with --accept (with the passphrase, where the vault has one).",
            run: verify),
        Command(
            name: "recover", summary: "copy every item that still opens into a new vault",
            positionals: ["FILE"],
            examples: ["keychain recover ~/recovered.keychain"],
            notes:
                "For a damaged vault: the new vault takes the same passphrase (or a key file when there is none). Items under an access control and items that do not open stay behind, counted.",
            run: recover),
    ]

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
        vault.lockForUser()
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
}
