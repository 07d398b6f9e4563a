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
        if let path = environment["KEYCHAIN_PASSPHRASE_FILE"], !path.isEmpty {
            return try read(path, what: "KEYCHAIN_PASSPHRASE_FILE")
        }
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let path = directory + "/keychain-passphrase"
            if FileManager.default.fileExists(atPath: path) { return try read(path, what: "the systemd credential keychain-passphrase") }
        }
        if let typed = terminal.prompt(prompt) { return typed }
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
            guard let first = terminal.prompt("New passphrase: "), let second = terminal.prompt("Repeat new passphrase: ") else {
                throw CommandFailure("no terminal to ask for the new passphrase", code: .usage)
            }
            guard first == second else { throw CommandFailure("the two passphrases differ; nothing was changed", code: .usage) }
            passphrase = first
        }
        guard passphrase.count > 0 else { throw CommandFailure("the new passphrase is empty; nothing was changed", code: .usage) }
        return passphrase
    }

    private func read(_ path: String, what: String) throws(CommandFailure) -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure("cannot open \(what) (\(path)): \(String(cString: strerror(errno)))", code: .failure) }
        defer { close(fd) }
        return try terminal.readAll(fd, limit: 4096, what: what).droppingTrailingNewline()
    }
}
