/// Proves that the user is present before an item under ``AccessControl`` is read.
///
/// The proof is the vault passphrase: it unwraps the private key that opens such items, so an
/// authenticator cannot be bypassed by a check elsewhere. The default authenticator asks on the
/// controlling terminal (``TerminalAuthenticator``); an application with a user interface
/// supplies its own (a dialog, a fingerprint reader guarding a stored passphrase...) through
/// ``PresenceAuthentication/setDefault(_:)`` or an ``AuthenticationContext``.
public protocol PresenceAuthenticator: Sendable {
    /// Whether the proofs come from a biometric check, as ``AccessControl/biometryAny`` and
    /// ``AccessControl/biometryCurrentSet`` require. False unless the authenticator says so.
    var offersBiometry: Bool { get }

    /// Asks the user for the proof and returns the vault passphrase.
    ///
    /// - Throws: ``PresenceRefusal/cancelled`` when the user declines or cancels,
    ///   ``PresenceRefusal/unavailable(_:)`` when the user cannot be asked (no terminal...).
    func authenticate(_ request: PresenceRequest) throws(PresenceRefusal) -> SecretBytes
}

extension PresenceAuthenticator {
    public var offersBiometry: Bool { false }
}

/// What an authenticator is asked to prove, and why (to show the user).
public struct PresenceRequest: Sendable, Hashable {
    /// The application's reason, as given to the read (Valet's `userPrompt`); may be empty.
    public var reason: String
    /// The access control of the item being read.
    public var accessControl: AccessControl
    /// The vault whose passphrase is the proof.
    public var vaultPath: String

    /// A request to prove presence for `accessControl`, shown with `reason`, for the vault at `vaultPath`.
    public init(reason: String, accessControl: AccessControl, vaultPath: String) {
        self.reason = reason
        self.accessControl = accessControl
        self.vaultPath = vaultPath
    }
}

/// Why an authenticator gave no proof.
public enum PresenceRefusal: Error, Sendable, Equatable {
    /// The user declined or cancelled.
    case cancelled
    /// The user could not be asked: no terminal, no display... The reason says which.
    case unavailable(String)
}
