/// The default ``PresenceAuthenticator``: asks for the vault passphrase on the controlling
/// terminal (`/dev/tty`), with echo off, as `sudo` does. An empty answer or end of input
/// cancels. Without a controlling terminal it refuses with ``PresenceRefusal/unavailable(_:)``.
public struct TerminalAuthenticator: PresenceAuthenticator {
    /// An authenticator that asks on the controlling terminal.
    public init() {}

    public func authenticate(_ request: PresenceRequest) throws(PresenceRefusal) -> SecretBytes {
        let reason = request.reason.isEmpty ? "A program is reading an item protected by user presence." : request.reason
        let message = "\(reason)\nPassphrase of \(request.vaultPath) (empty to cancel): "
        let typed: SecretBytes?
        do { typed = try TerminalInput.readSecret(prompt: message) } catch { throw .unavailable(error.description) }
        guard let answer = typed else {
            throw .unavailable("no controlling terminal to ask for the passphrase")
        }
        guard answer.count > 0 else { throw .cancelled }
        return answer
    }
}
