import Dispatch
import KeychainCore
internal import KeychainSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One pinentry dialog that asks for the vault's passphrase and unlocks the vault with it, as
/// `keychain unlock` does (for every process of the user): a wrong passphrase is said so and
/// asked again, up to ``tries`` times.
///
/// It runs on a thread of its own, never the bus's: the conversation waits on a person, and each
/// try is a passphrase derivation (scrypt, about half a second), while the daemon keeps answering
/// other clients. Its end is handed back through ``wakeDescriptor`` (a socket the bus loop
/// polls beside the bus); the loop then reads ``outcome``. ``cancel()`` (a Dismiss, the client
/// gone) ends the pinentry at once.
final class UnlockDialog: Sendable {
    /// How it ended.
    enum Outcome: Sendable, Equatable {
        case unlocked
        /// Cancelled by the user or the client, too many wrong passphrases, or a pinentry that
        /// misbehaved (the reason, for the daemon's log: never what was typed).
        case dismissed(String)
    }

    static let tries = 3
    /// GPG_ERR_CANCELED, the low bits of the error a pinentry answers when its dialog is closed.
    static let cancelledCode: UInt32 = 99
    /// How long a pinentry may take to answer a command other than GETPIN: a program that
    /// stops talking ends the dialog within this bound.
    static let replyBound: Duration = .seconds(5)
    /// How long the person has to answer: the pinentry is asked to give up by then (SETTIMEOUT),
    /// and the dialog ends a little after, whatever the pinentry does.
    static let answerSeconds = 300

    /// Readable once the dialog has ended (one end of a socket pair whose other end the
    /// dialog's thread writes one byte to).
    let wakeDescriptor: Int32
    private let wakeWriter: Int32
    private struct State {
        var cancelled = false
        var process: PinentryProcess?
        var outcome: Outcome?
    }
    private let state = Mutex(State())

    init() throws(ServiceError) {
        // A socket pair rather than pipe2 (which Glibc's module does not export): made
        // close-on-exec at once, so that a pinentry started meanwhile does not inherit it.
        let pair: (Int32, Int32)
        do { pair = try SystemCall.socketPair(nonBlocking: true) } catch {
            throw .init(.failed, "no descriptor to wait for an unlock dialog on: \(error.reason)")
        }
        wakeDescriptor = pair.0
        wakeWriter = pair.1
    }

    deinit {
        SystemCall.close(wakeDescriptor)
        SystemCall.close(wakeWriter)
    }

    /// What ended the dialog; nil while it runs.
    var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Starts the dialog for `vault` with `choice`'s pinentry, over the window `parentWindow`
    /// (the `Prompt` call's window-id; empty for none).
    func start(vault: Vault, choice: PinentryChoice, description: String, parentWindow: String) {
        DispatchQueue.global().async { [self] in
            let outcome = converse(vault: vault, choice: choice, description: description, parentWindow: parentWindow)
            state.withLock { state in
                state.outcome = state.cancelled ? .dismissed("dismissed") : outcome
                state.process = nil
            }
            _ = withUnsafeBytes(of: UInt8(1)) { try? SystemCall.send(wakeWriter, $0) }
        }
    }

    /// Ends the dialog, dismissed: its pinentry is killed and no passphrase it may still give
    /// is used.
    func cancel() {
        let process = state.withLock { state -> PinentryProcess? in
            state.cancelled = true
            return state.process
        }
        process?.terminate()
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    private func converse(vault: Vault, choice: PinentryChoice, description: String, parentWindow: String) -> Outcome {
        let process: PinentryProcess
        do {
            process = try PinentryProcess(choice)
        } catch {
            return .dismissed(error.description)
        }
        let started = state.withLock { state -> Bool in
            if !state.cancelled { state.process = process }
            return !state.cancelled
        }
        defer {
            try? process.send("BYE")
            process.reap()
        }
        guard started else { return .dismissed("dismissed") }
        do {
            let soon = { ContinuousClock.now + Self.replyBound }
            guard case .ok = try process.answer(by: soon()) else { return .dismissed("the pinentry refused to start") }
            var setup: [String] = []
            if let tty = choice.ttyName { setup.append("OPTION ttyname=" + AssuanCoding.escape(tty)) }
            if let type = choice.ttyType { setup.append("OPTION ttytype=" + AssuanCoding.escape(type)) }
            if !parentWindow.isEmpty { setup.append("OPTION parent-wid=" + AssuanCoding.escape(parentWindow)) }
            setup += [
                "SETTITLE " + AssuanCoding.escape("Unlock the keychain"),
                "SETDESC " + AssuanCoding.escape(description),
                "SETPROMPT " + AssuanCoding.escape("Passphrase:"),
                "SETTIMEOUT \(Self.answerSeconds)",
            ]
            for command in setup {
                try process.send(command)
                // An option this pinentry does not know (parent-wid on a terminal one) is no reason to stop.
                _ = try process.answer(by: soon())
            }
            for attempt in 1...Self.tries {
                try process.send("GETPIN")
                let answer = try process.answer(by: ContinuousClock.now + .seconds(Self.answerSeconds) + Self.replyBound)
                let passphrase: SecretBytes
                switch answer {
                // An empty answer is one more wrong passphrase.
                case .ok(let data): passphrase = data ?? SecretBytes(count: 0) { _ in }
                case .error(let code, _): return .dismissed(code & 0xFFFF == Self.cancelledCode ? "cancelled" : "the pinentry failed (error \(code))")
                }
                if isCancelled { return .dismissed("dismissed") }
                do throws(StoreError) {
                    try vault.unlock(forUser: passphrase)
                    return .unlocked
                } catch .wrongPassphrase {
                    guard attempt < Self.tries else { return .dismissed("a wrong passphrase \(Self.tries) times") }
                    try process.send("SETERROR " + AssuanCoding.escape("Wrong passphrase (try \(attempt + 1) of \(Self.tries))"))
                    _ = try process.answer(by: soon())
                } catch {
                    return .dismissed("the vault did not unlock: \(error)")
                }
            }
            return .dismissed("a wrong passphrase \(Self.tries) times")
        } catch {
            return .dismissed(isCancelled ? "dismissed" : error.description)
        }
    }
}
