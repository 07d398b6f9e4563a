import Foundation
import KeychainCore

/// A presence authenticator that answers from a script, for tests: each prompt takes the next
/// answer (a passphrase, a cancel, or "cannot ask"); a prompt with no answer left cancels and
/// is counted, so a test can prove that something never asked.
public final class ScriptedAuthenticator: PresenceAuthenticator, @unchecked Sendable {
    public enum Answer: Sendable {
        case passphrase(String)
        case cancel
        case unavailable
    }

    public let offersBiometry: Bool
    private let lock = NSLock()
    private var answers: [Answer]
    private var seen: [PresenceRequest] = []

    public init(_ answers: [Answer] = [], offersBiometry: Bool = false) {
        self.answers = answers
        self.offersBiometry = offersBiometry
    }

    /// Adds answers for later prompts.
    public func script(_ more: Answer...) {
        lock.withLock { answers.append(contentsOf: more) }
    }

    /// The prompts shown so far.
    public var requests: [PresenceRequest] { lock.withLock { seen } }
    public var promptCount: Int { requests.count }

    public func authenticate(_ request: PresenceRequest) throws(PresenceRefusal) -> SecretBytes {
        let answer: Answer? = lock.withLock {
            seen.append(request)
            return answers.isEmpty ? nil : answers.removeFirst()
        }
        switch answer {
        case .passphrase(let text): return SecretBytes(utf8: text)
        case .unavailable: throw .unavailable("scripted: no way to ask")
        case .cancel, nil: throw .cancelled
        }
    }
}
