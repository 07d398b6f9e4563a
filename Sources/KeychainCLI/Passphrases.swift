import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import KeychainCore

/// Where the passphrase comes from, never argv: `KEYCHAIN_PASSPHRASE_FILE`, then a systemd
/// credential (`$CREDENTIALS_DIRECTORY/keychain-passphrase`), then a no-echo prompt.
struct Passphrases {
    let environment: [String: String]
    let terminal: Terminal

    func current(prompt: String = "Vault passphrase: ") throws(CommandFailure) -> SecretBytes {
        // The library's reader, so that the command and a service read a passphrase file alike.
        do {
            if let passphrase = try PassphraseFile.fromEnvironment(environment) { return passphrase }
        } catch {
            throw CommandFailure(error.description, code: .failure)
        }
        if let typed = try terminal.prompt(prompt) { return typed }
        throw CommandFailure("the vault is locked and no passphrase is available: set KEYCHAIN_PASSPHRASE_FILE or run from a terminal", code: .locked)
    }

    /// A new passphrase: `KEYCHAIN_NEW_PASSPHRASE_FILE`, standard input when it is not a
    /// terminal, or typed twice at a no-echo prompt.
    func new() throws(CommandFailure) -> SecretBytes {
        let passphrase: SecretBytes
        if let path = environment["KEYCHAIN_NEW_PASSPHRASE_FILE"], !path.isEmpty {
            passphrase = try read(path, what: "KEYCHAIN_NEW_PASSPHRASE_FILE")
        } else if !terminal.stdinIsTerminal {
            passphrase = try terminal.readStandardInput().droppingTrailingNewline()
        } else {
            guard let first = try terminal.prompt("New passphrase: "), let second = try terminal.prompt("Repeat new passphrase: ") else {
                throw CommandFailure("no terminal to ask for the new passphrase", code: .usage)
            }
            guard first == second else { throw CommandFailure("the two passphrases differ; nothing was changed", code: .usage) }
            passphrase = first
        }
        guard passphrase.count > 0 else { throw CommandFailure("the new passphrase is empty; nothing was changed", code: .usage) }
        return passphrase
    }

    /// An archive's passphrase: `KEYCHAIN_ARCHIVE_PASSPHRASE_FILE`, or typed at a no-echo
    /// prompt (twice when `confirm`, for a new archive).
    func archive(confirm: Bool) throws(CommandFailure) -> SecretBytes {
        if let path = environment["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE"], !path.isEmpty {
            let passphrase = try read(path, what: "KEYCHAIN_ARCHIVE_PASSPHRASE_FILE")
            guard passphrase.count > 0 else { throw CommandFailure("the archive passphrase is empty", code: .usage) }
            return passphrase
        }
        guard let first = try terminal.prompt("Archive passphrase: ") else {
            throw CommandFailure("no archive passphrase: set KEYCHAIN_ARCHIVE_PASSPHRASE_FILE or run from a terminal", code: .usage)
        }
        if confirm {
            guard let second = try terminal.prompt("Repeat archive passphrase: "), second == first else {
                throw CommandFailure("the two passphrases differ; nothing was written", code: .usage)
            }
        }
        guard first.count > 0 else { throw CommandFailure("the archive passphrase is empty", code: .usage) }
        return first
    }

    /// A new passphrase's file, read as the current one's is.
    private func read(_ path: String, what: String) throws(CommandFailure) -> SecretBytes {
        do { return try PassphraseFile.read(path, what: what) } catch { throw CommandFailure(error.description, code: .failure) }
    }
}
