import FoundationEssentials
import Synchronization

/// Who proves presence for a read, and whether a proof, once given, is reused: the Linux
/// counterpart of `LAContext`.
///
/// A context that reuses proofs keeps the unwrapped presence key of each vault it opened, in
/// memory, until ``invalidate()``: this is how Valet's `SinglePromptSecureEnclaveValet` asks
/// once. Thread-safe.
public final class AuthenticationContext: Sendable {
    /// Asks for the proof; the process default when the context was made without one.
    public let authenticator: any PresenceAuthenticator
    /// Whether a proof given once serves later reads until ``invalidate()``.
    public let reusesProof: Bool
    /// When true, reads never ask: an item that needs a proof fails with
    /// ``StoreError/interactionNotAllowed`` unless a reused proof is at hand.
    public let interactionNotAllowed: Bool

    /// The reason shown and the proofs kept, changed together under one lock.
    private struct State {
        var reason: String
        var keys: [[UInt8]: SecretBytes] = [:]
    }
    private let state: Mutex<State>

    /// - Parameters:
    ///   - authenticator: who asks; nil for ``PresenceAuthentication/defaultAuthenticator`` at the time of the read.
    ///   - reason: the text shown to the user (may be empty).
    ///   - reusesProof: keep the proof for later reads until ``invalidate()``.
    ///   - interactionNotAllowed: never ask.
    public init(authenticator: (any PresenceAuthenticator)? = nil, reason: String = "", reusesProof: Bool = false, interactionNotAllowed: Bool = false) {
        self.authenticator = authenticator ?? PresenceAuthentication.defaultAuthenticator
        self.state = Mutex(State(reason: reason))
        self.reusesProof = reusesProof
        self.interactionNotAllowed = interactionNotAllowed
    }

    /// The text shown to the user at the next prompt.
    public var localizedReason: String {
        get { state.withLock { $0.reason } }
        set { state.withLock { $0.reason = newValue } }
    }

    /// Forgets every proof this context holds (its keys are wiped from memory): the next read asks again.
    public func invalidate() {
        state.withLock { $0.keys = [:] }
    }

    func key(for vaultID: [UInt8]) -> SecretBytes? {
        state.withLock { $0.keys[vaultID] }
    }

    func keep(_ key: SecretBytes, for vaultID: [UInt8]) {
        guard reusesProof else { return }
        state.withLock { $0.keys[vaultID] = key }
    }
}

/// The process-wide default ``PresenceAuthenticator``: the terminal, unless the application
/// installs its own.
public enum PresenceAuthentication {
    @TaskLocal private static var override: (any PresenceAuthenticator)?
    private static let current = Mutex<any PresenceAuthenticator>(TerminalAuthenticator())

    /// The authenticator reads use when their query names no context: the task's (see
    /// ``withAuthenticator(_:_:)``), else the process default.
    public static var defaultAuthenticator: any PresenceAuthenticator {
        if let override { return override }
        return current.withLock { $0 }
    }

    /// Installs `authenticator` as the process default (for instance a GUI prompt).
    public static func setDefault(_ authenticator: any PresenceAuthenticator) {
        current.withLock { $0 = authenticator }
    }

    /// Runs `body` with `authenticator` as the default of this task (and the contexts made in it).
    public static func withAuthenticator<R>(_ authenticator: any PresenceAuthenticator, _ body: () throws -> R) rethrows -> R {
        try $override.withValue(authenticator, operation: body)
    }
}
