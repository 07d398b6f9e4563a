import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// `org.freedesktop.Secret.Prompt`, on `/org/freedesktop/secrets/prompt/N`: what `Unlock`
/// returns for a locked vault.
///
/// `Prompt` completes at once when the vault is open already (the user's own `keychain unlock`).
/// Otherwise, where a pinentry can be shown (``PinentryChoice``), it shows one that asks for the
/// vault's passphrase and unlocks the vault with it for the user's processes, as `keychain
/// unlock` does; `Completed` comes when it ends: unlocked, or dismissed (the user cancelled,
/// three wrong passphrases, a pinentry that misbehaved, `Dismiss`, the client gone). Where none
/// can be shown, it completes at once as dismissed and the daemon's log says to run `keychain
/// unlock`: a client never waits on a dialog nobody can see, and takes its own fallback.
enum PromptInterface {
    static let name = "org.freedesktop.Secret.Prompt"
    /// The longest window id passed on to the pinentry (an X11 or Wayland handle is short).
    static let windowIDLimit = 128
}

/// An unlock dialog that is up, and the prompts (id, and the unique name of the client that
/// called `Prompt`) that complete when it ends. Several prompts share one dialog: the user is
/// asked once.
final class PendingUnlock {
    let dialog: UnlockDialog
    var waiting: [String: String] = [:]

    init(_ dialog: UnlockDialog) { self.dialog = dialog }
}

extension SecretServiceDaemon {
    func promptCall(_ member: String, _ call: Call) throws(ServiceError) -> [BusValue] {
        guard case .prompt(let id) = call.object else { throw .noSuchObject(call.path) }
        if member == "Dismiss" {
            prompts.remove(id)
            if pendingUnlock?.waiting.removeValue(forKey: id) != nil { dismissDialogIfUnwanted() }
            emit(call.path, PromptInterface.name, "Completed", [.boolean(true), .variant(.paths([]))])
            return []
        }
        // Prompt called again while its dialog is up: the dialog's end completes it.
        if pendingUnlock?.waiting[id] != nil { return [] }
        let vaultCollections = collectionOrder.compactMap { collections[$0] as? VaultCollection }
        if vaultCollections.allSatisfy({ !$0.isLocked }) {
            prompts.remove(id)
            emit(call.path, PromptInterface.name, "Completed", [.boolean(false), .variant(.paths(vaultCollections.map { ObjectPath.collectionPath($0.name) }))])
            return []
        }
        if let pinentry, let vault, vault.hasPassphrase, let bus {
            let window = call.arguments.first?.string ?? ""
            try showUnlockDialog(
                for: id, of: call.sender, pinentry: pinentry, vault: vault, bus: bus, window: window.utf8.count <= PromptInterface.windowIDLimit ? window : "")
            return []
        }
        // Nowhere to show a dialog: the prompt ends as dismissed, as the specification has a
        // prompt the user closed end, so that a client takes its own way on (git asks for the
        // password, keyring raises its locked error) instead of failing inside the library.
        // The way to open the vault goes to the daemon's log, once per prompt.
        prompts.remove(id)
        Self.log("a program asked to unlock the vault and no pinentry can be shown here: run `keychain unlock`")
        emit(call.path, PromptInterface.name, "Completed", [.boolean(true), .variant(.paths([]))])
        return []
    }

    /// Puts prompt `id` behind the dialog that is up, or shows one.
    private func showUnlockDialog(
        for id: String, of client: String, pinentry: PinentryChoice, vault: Vault, bus: BusConnection, window: String
    ) throws(ServiceError) {
        if pendingUnlock == nil {
            let dialog = try UnlockDialog()
            bus.watch(dialog.wakeDescriptor) { [unowned self, dialog] in self.unlockDialogEnded(dialog) }
            pendingUnlock = PendingUnlock(dialog)
            dialog.start(
                vault: vault, choice: pinentry,
                description: "A program asks for your secrets. Enter the passphrase of the keychain vault \(vault.location.path) to unlock it for your session.",
                parentWindow: window)
        }
        pendingUnlock?.waiting[id] = client
    }

    /// Ends the dialog when no prompt waits on it any more.
    private func dismissDialogIfUnwanted() {
        guard let pending = pendingUnlock, pending.waiting.isEmpty else { return }
        pending.dialog.cancel()
        // It still ends on its own thread, and is forgotten then (``unlockDialogEnded(_:)``).
        pendingUnlock = nil
    }

    /// The dismissal of the prompts of a client that left the bus.
    func promptClientLeft(_ client: String) {
        guard let pending = pendingUnlock else { return }
        for (id, owner) in pending.waiting where owner == client {
            pending.waiting[id] = nil
            prompts.remove(id)
        }
        dismissDialogIfUnwanted()
    }

    /// On the bus thread, once `dialog` has ended: completes the prompts waiting on it.
    private func unlockDialogEnded(_ dialog: UnlockDialog) {
        guard let outcome = dialog.outcome else { return }
        bus?.unwatch(dialog.wakeDescriptor)
        guard let pending = pendingUnlock, pending.dialog === dialog else { return }
        pendingUnlock = nil
        let vaultCollections = collectionOrder.compactMap { collections[$0] as? VaultCollection }
        let unlocked = outcome == .unlocked && vaultCollections.allSatisfy { !$0.isLocked }
        if case .dismissed(let reason) = outcome { Self.log("the unlock prompt was dismissed: \(reason)") }
        for id in pending.waiting.keys.sorted() {
            prompts.remove(id)
            let paths = unlocked ? vaultCollections.map { ObjectPath.collectionPath($0.name) } : []
            emit(ObjectPath.promptPath(id), PromptInterface.name, "Completed", [.boolean(!unlocked), .variant(.paths(paths))])
        }
        guard unlocked else { return }
        loadVaultContents()
        for collection in vaultCollections {
            propertiesChanged(ObjectPath.collectionPath(collection.name), CollectionInterface.name, [("Locked", .boolean(false))])
        }
    }

    /// One line on the daemon's standard error: what happened, never a value.
    static func log(_ line: String) {
        let text = Array("keychain: \(line)\n".utf8)
        _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
