import FoundationEssentials
import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a passphrase comes from, never argv, by one rule for every command: its file
/// (`KEYCHAIN_PASSPHRASE_FILE`, `KEYCHAIN_NEW_PASSPHRASE_FILE`, `KEYCHAIN_ARCHIVE_PASSPHRASE_FILE`),
/// a systemd credential for the vault's (`$CREDENTIALS_DIRECTORY/keychain-passphrase`), then
/// standard input when it is not a terminal, for the one passphrase a command is about (unlock
/// and rekey: the vault's; passwd: the new one; export and import: the archive's), then a
/// no-echo prompt.
struct Passphrases {
    let environment: [String: String]
    let terminal: Terminal

    /// The vault's passphrase; from standard input too when `fromStandardInput` (the command is
    /// about it, and reads nothing else there).
    func current(prompt: String = "Vault passphrase: ", fromStandardInput: Bool = false) throws(CommandFailure) -> SecretBytes {
        // The unlocker's sources first (without its prompt: standard input comes before it here),
        // so that the command and a library program find a passphrase alike.
        do {
            if let passphrase = try Unlocker(environment: environment).passphrase() { return passphrase }
        } catch {
            throw CommandFailure(error.description, code: .failure)
        }
        if fromStandardInput, let piped = try piped("the vault passphrase") { return piped }
        if let typed = try terminal.prompt(prompt) { return typed }
        let sources = fromStandardInput ? "pipe it on standard input, set KEYCHAIN_PASSPHRASE_FILE" : "set KEYCHAIN_PASSPHRASE_FILE"
        throw CommandFailure("the vault is locked and no passphrase is available: \(sources) or run from a terminal", code: .locked)
    }

    /// A new passphrase: `KEYCHAIN_NEW_PASSPHRASE_FILE`, standard input when it is not a
    /// terminal, or typed twice at a no-echo prompt.
    func new() throws(CommandFailure) -> SecretBytes {
        let passphrase: SecretBytes
        if let path = environment["KEYCHAIN_NEW_PASSPHRASE_FILE"], !path.isEmpty {
            passphrase = try read(path, what: "KEYCHAIN_NEW_PASSPHRASE_FILE")
        } else if !terminal.stdinIsTerminal {
            passphrase = try piped("the new passphrase") ?? SecretBytes([])
        } else {
            guard let typed = try typed("New passphrase", confirm: true, unchanged: "nothing was changed") else {
                throw CommandFailure("no terminal to ask for the new passphrase", code: .usage)
            }
            passphrase = typed
        }
        guard passphrase.count > 0 else { throw CommandFailure("the new passphrase is empty; nothing was changed", code: .usage) }
        return passphrase
    }

    /// An archive's passphrase: `KEYCHAIN_ARCHIVE_PASSPHRASE_FILE`, standard input when it is
    /// not a terminal, or typed at a no-echo prompt (twice when `confirm`, for a new archive).
    func archive(confirm: Bool) throws(CommandFailure) -> SecretBytes {
        if let path = environment["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE"], !path.isEmpty {
            let passphrase = try read(path, what: "KEYCHAIN_ARCHIVE_PASSPHRASE_FILE")
            guard passphrase.count > 0 else { throw CommandFailure("the archive passphrase is empty", code: .usage) }
            return passphrase
        }
        if let piped = try piped("the archive passphrase") {
            guard piped.count > 0 else { throw CommandFailure("the archive passphrase is empty", code: .usage) }
            return piped
        }
        guard let typed = try typed("Archive passphrase", confirm: confirm, unchanged: "nothing was written") else {
            throw CommandFailure("no archive passphrase: set KEYCHAIN_ARCHIVE_PASSPHRASE_FILE or run from a terminal", code: .usage)
        }
        guard typed.count > 0 else { throw CommandFailure("the archive passphrase is empty", code: .usage) }
        return typed
    }

    /// The password of the provider's collection labelled `label` (gnome-keyring's keyring
    /// password), read as the vault's passphrase is: `KEYCHAIN_PROVIDER_PASSWORD_FILE`,
    /// standard input when it is not a terminal, or a no-echo prompt naming the collection.
    func provider(label: String) throws(CommandFailure) -> SecretBytes {
        if let path = environment["KEYCHAIN_PROVIDER_PASSWORD_FILE"], !path.isEmpty { return try read(path, what: "KEYCHAIN_PROVIDER_PASSWORD_FILE") }
        if let piped = try piped("the provider's password") { return piped }
        if let typed = try terminal.prompt("Password of the Secret Service collection '\(label)': ") { return typed }
        throw CommandFailure(
            "the Secret Service's collection '\(label)' is locked and no password is available: set KEYCHAIN_PROVIDER_PASSWORD_FILE, pipe it on standard input, or run from a terminal",
            code: .locked)
    }

    /// One line of standard input when it is not a terminal (a pipe or a file); nil at a
    /// terminal, and when nothing was piped (standard input empty, or /dev/null).
    private func piped(_ what: String) throws(CommandFailure) -> SecretBytes? {
        guard !terminal.stdinIsTerminal else { return nil }
        let line = try terminal.readStandardInput().droppingTrailingNewline()
        guard line.count > 0 else { return nil }
        // One line: a second would become part of the passphrase, one nobody could type again.
        let lines = line.withUnsafeBytes { $0.contains(UInt8(ascii: "\n")) || $0.contains(UInt8(ascii: "\r")) }
        guard !lines else {
            throw CommandFailure("\(what) on standard input is more than one line; nothing was used (pipe exactly one line)", code: .usage)
        }
        guard line.count <= PassphraseFile.maximumLength else {
            throw CommandFailure("\(what) on standard input is longer than \(PassphraseFile.maximumLength) bytes; nothing was used", code: .usage)
        }
        return line
    }

    /// A passphrase typed at a no-echo prompt labelled `label`, and again when `confirm`; nil
    /// when there is no terminal to ask at.
    /// - Throws: a usage failure, ending in `unchanged`, when the two differ.
    private func typed(_ label: String, confirm: Bool, unchanged: String) throws(CommandFailure) -> SecretBytes? {
        guard let first = try terminal.prompt("\(label): ") else { return nil }
        guard confirm else { return first }
        guard let second = try terminal.prompt("Repeat \(label.prefix(1).lowercased() + label.dropFirst()): ") else { return nil }
        guard second == first else { throw CommandFailure("the two passphrases differ; \(unchanged)", code: .usage) }
        return first
    }

    /// A new passphrase's file, read as the current one's is.
    private func read(_ path: String, what: String) throws(CommandFailure) -> SecretBytes {
        do { return try PassphraseFile.read(path, what: what) } catch { throw CommandFailure(error.description, code: .failure) }
    }
}
