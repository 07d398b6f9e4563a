import KeychainCore

/// The exit statuses scripts can rely on (listed in the README).
package enum ExitCode: Int32, Sendable, CaseIterable {
    /// Done; for `get`/`contains`, the item exists.
    case success = 0
    /// No such item.
    case notFound = 1
    /// The command line is wrong; nothing was done.
    case usage = 2
    /// The vault is locked, the passphrase is wrong, or a passphrase is needed and none was
    /// given (also: the proof of presence an item needs was cancelled or wrong).
    case locked = 3
    /// Any other failure (corrupted or tampered vault, I/O, permissions...).
    case failure = 4

    /// The one place store errors become exit statuses.
    init(_ error: StoreError) {
        switch error {
        case .itemNotFound, .noVault: self = .notFound
        case .locked, .collectionLocked, .wrongPassphrase, .passphraseRequired, .userCancelled, .authenticationFailed, .interactionNotAllowed: self = .locked
        case .invalidArgument: self = .usage
        default: self = .failure
        }
    }
}

/// A failure that ends the command: its message (never a secret) and exit status.
struct CommandFailure: Error {
    let message: String
    let code: ExitCode
    /// The command that failed, for the message's prefix (`keychain get: ...`).
    let command: String?

    init(_ message: String, code: ExitCode, command: String? = nil) {
        self.message = message
        self.code = code
        self.command = command
    }

    init(_ error: StoreError) {
        self.init(error.description, code: ExitCode(error))
    }

    /// The same failure, attributed to `command`.
    func `in`(_ command: String) -> CommandFailure {
        CommandFailure(message, code: code, command: self.command ?? command)
    }
}
