/// `org.freedesktop.Secret.Prompt`, on `/org/freedesktop/secrets/prompt/N`: what `Unlock`
/// returns for a locked vault. No window is ever shown: the vault opens with the user's own
/// `keychain unlock`, so `Prompt` checks whether that happened, completes at once when it did,
/// and otherwise fails with a message that says so (a client never waits on it).
enum PromptInterface {
    static let name = "org.freedesktop.Secret.Prompt"
}

extension SecretServiceDaemon {
    func promptCall(_ member: String, _ call: Call) throws(ServiceError) -> [BusValue] {
        guard case .prompt(let id) = call.object else { throw .noSuchObject(call.path) }
        prompts.remove(id)
        let vaultCollections = collectionOrder.compactMap { collections[$0] as? VaultCollection }
        if member == "Prompt", vaultCollections.allSatisfy({ !$0.isLocked }) {
            let unlocked = vaultCollections.map { ObjectPath.collectionPath($0.name) }
            emit(call.path, PromptInterface.name, "Completed", [.boolean(false), .variant(.paths(unlocked))])
            return []
        }
        // A failed Prompt call is the prompt's end (libsecret takes it so, and a Completed
        // signal besides would end its wait twice); a Dismiss completes it, dismissed.
        if member == "Prompt" {
            throw .isLocked("the vault (run `keychain unlock` in a terminal, then try again)")
        }
        emit(call.path, PromptInterface.name, "Completed", [.boolean(true), .variant(.paths([]))])
        return []
    }
}
