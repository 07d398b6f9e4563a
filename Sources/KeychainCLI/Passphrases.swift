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
            // systemd makes that directory private to the service: its owner and mode are systemd's.
            if FileManager.default.fileExists(atPath: path) { return try read(path, what: "the systemd credential keychain-passphrase", checkOwnership: false) }
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

    /// A passphrase file: the user's own, closed to others (a passphrase others can read is
    /// no secret), at most ``TerminalInput/maximumLineLength`` bytes (refused, never cut).
    private func read(_ path: String, what: String, checkOwnership: Bool = true) throws(CommandFailure) -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw CommandFailure("cannot open \(what) (\(path)): \(String(cString: strerror(errno)))", code: .failure) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CommandFailure("cannot inspect \(what) (\(path)): \(String(cString: strerror(errno)))", code: .failure) }
        if checkOwnership && info.st_mode & S_IFMT == S_IFREG {
            if info.st_uid != geteuid() {
                throw CommandFailure("refusing \(what) (\(path)): it belongs to uid \(info.st_uid), not to you", code: .failure)
            }
            if info.st_mode & 0o077 != 0 {
                throw CommandFailure("refusing \(what) (\(path)): other users can read or change it (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it", code: .failure)
            }
        }
        let limit = TerminalInput.maximumLineLength
        let bytes = try terminal.readAll(fd, limit: limit + 2, what: what).droppingTrailingNewline()
        guard bytes.count <= limit else {
            throw CommandFailure("refusing \(what) (\(path)): the passphrase is longer than \(limit) bytes", code: .failure)
        }
        return bytes
    }
}
