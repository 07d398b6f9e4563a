import Foundation
import KeychainCore

/// What to authenticate.
public enum LAPolicy: Int, Sendable {
    /// Biometry only (refused unless a biometric authenticator is installed).
    case deviceOwnerAuthenticationWithBiometrics = 1
    /// The device owner: here, the vault passphrase through the process's presence authenticator.
    case deviceOwnerAuthentication = 2
}

/// The kind of biometry available.
public enum LABiometryType: Int, Sendable {
    /// None (the usual case on Linux).
    case none = 0
    /// A fingerprint reader.
    case touchID = 1
    /// A face reader.
    case faceID = 2
}

/// Why an evaluation failed, with Apple's codes.
public struct LAError: Error, Sendable, Equatable {
    /// The failure's code.
    public enum Code: Int, Sendable {
        /// The credentials were not valid.
        case authenticationFailed = -1
        /// The user cancelled.
        case userCancel = -2
        /// The user chose the fallback.
        case userFallback = -3
        /// The system cancelled.
        case systemCancel = -4
        /// No passcode (here: no way to ask for one).
        case passcodeNotSet = -5
        /// Biometry is not available.
        case biometryNotAvailable = -6
        /// No biometry is enrolled.
        case biometryNotEnrolled = -7
        /// Biometry is locked out.
        case biometryLockout = -8
        /// The application cancelled.
        case appCancel = -9
        /// The context was invalidated.
        case invalidContext = -10
        /// Interaction was needed but not allowed.
        case notInteractive = -1004
    }

    /// The failure's code.
    public let code: Code
    /// An error with `code`.
    public init(_ code: Code) { self.code = code }
}

/// An authentication context, as `LAContext` is on Apple platforms: passed as
/// `kSecUseAuthenticationContext`, the proof it was given serves the keychain reads that use it
/// until ``invalidate()``; with ``interactionNotAllowed``, reads that need a proof fail instead
/// of asking. Proofs come from the process's presence authenticator (the terminal by default,
/// `PresenceAuthentication.setDefault` for another).
open class LAContext: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var context = AuthenticationContext(reusesProof: true)
    private var invalidated = false

    public override init() { super.init() }

    /// The text shown when a proof is asked for.
    open var localizedReason: String {
        get { lock.withLock { context.localizedReason } }
        set { lock.withLock { context.localizedReason = newValue } }
    }

    /// The title of the fallback button (kept for source compatibility; nothing shows it here).
    open var localizedFallbackTitle: String?
    /// The title of the cancel button (kept for source compatibility; nothing shows it here).
    open var localizedCancelTitle: String?
    /// How long a biometric proof may be reused (kept for source compatibility).
    open var touchIDAuthenticationAllowableReuseDuration: TimeInterval = 0

    /// When true, nothing asks for a proof through this context: reads fail with
    /// `errSecInteractionNotAllowed` unless a proof is already held.
    open var interactionNotAllowed: Bool {
        get { lock.withLock { context.interactionNotAllowed } }
        set {
            lock.withLock {
                guard newValue != context.interactionNotAllowed else { return }
                context = AuthenticationContext(authenticator: context.authenticator, reason: context.localizedReason, reusesProof: true, interactionNotAllowed: newValue)
            }
        }
    }

    /// The biometry the authenticator offers.
    open var biometryType: LABiometryType { PresenceAuthentication.defaultAuthenticator.offersBiometry ? .touchID : .none }

    /// Whether `policy` can be evaluated here; when not, `error` says why.
    @discardableResult
    open func canEvaluatePolicy(_ policy: LAPolicy, error: UnsafeMutablePointer<NSError?>?) -> Bool {
        if policy == .deviceOwnerAuthenticationWithBiometrics && !PresenceAuthentication.defaultAuthenticator.offersBiometry {
            error?.pointee = NSError(domain: "com.apple.LocalAuthentication", code: LAError.Code.biometryNotAvailable.rawValue)
            return false
        }
        return true
    }

    /// Asks the presence authenticator for a proof for `policy`, showing `localizedReason`,
    /// and calls `reply` with the outcome (on the calling thread, once the user answered).
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        let outcome = evaluate(policy, reason: localizedReason)
        reply(outcome == nil, outcome)
    }

    /// Asks for a proof for `policy`; throws ``LAError`` when there is none.
    @discardableResult
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        if let failure = evaluate(policy, reason: localizedReason) { throw failure }
        return true
    }

    /// Forgets every proof this context holds; it cannot be evaluated again.
    open func invalidate() {
        lock.withLock {
            invalidated = true
            context.invalidate()
        }
    }

    /// The context the keychain reads through (for `kSecUseAuthenticationContext`): for the
    /// package's Security module only.
    package var authenticationContext: AuthenticationContext { lock.withLock { context } }

    private func evaluate(_ policy: LAPolicy, reason: String) -> LAError? {
        let (authenticator, allowed, dead) = lock.withLock { (context.authenticator, !context.interactionNotAllowed, invalidated) }
        if dead { return LAError(.invalidContext) }
        if !allowed { return LAError(.notInteractive) }
        if policy == .deviceOwnerAuthenticationWithBiometrics && !authenticator.offersBiometry { return LAError(.biometryNotAvailable) }
        do throws(PresenceRefusal) {
            _ = try authenticator.authenticate(PresenceRequest(reason: reason, accessControl: .userPresence, vaultPath: VaultLocation.default().path))
            return nil
        } catch .cancelled {
            return LAError(.userCancel)
        } catch {
            return LAError(.passcodeNotSet)
        }
    }
}
