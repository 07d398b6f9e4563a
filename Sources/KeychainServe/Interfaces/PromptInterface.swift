import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `org.freedesktop.Secret.Prompt`, on `/org/freedesktop/secrets/prompt/ID`: what `Unlock`
/// returns for a locked vault, to the client that called it (``PromptTable``).
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

    static let methods = [
        ServedMethod(name, "Prompt", "s", "") { (daemon, call) throws(ServiceError) in try daemon.prompt(call) },
        ServedMethod(name, "Dismiss", "", "") { (daemon, call) throws(ServiceError) in
            guard case .prompt(let id) = call.object else { throw .noSuchObject(call.path) }
            try daemon.prompts.check(id, by: call.sender)
            daemon.prompts.remove(id)?.cancel()
            daemon.promptCompleted(id, dismissed: true, [])
            return []
        },
    ]
}

extension SecretServiceDaemon {
    fileprivate func prompt(_ call: Call) throws(ServiceError) -> [BusValue] {
        guard case .prompt(let id) = call.object else { throw .noSuchObject(call.path) }
        try prompts.check(id, by: call.sender)
        // Prompt called again while its dialog is up: the dialog's end completes it.
        if prompts.isWaiting(id) { return [] }
        let vaultCollections = collections.vaultCollections
        if vaultCollections.allSatisfy({ !$0.isLocked }) {
            prompts.remove(id)?.cancel()
            // Opened meanwhile (`keychain unlock`): clients hear of it now, not at the next look.
            announceLockChanges()
            promptCompleted(id, dismissed: false, vaultCollections.map { ObjectPath.collectionPath($0.name) })
            return []
        }
        if let pinentry, let vault, vault.hasPassphrase, let bus {
            let window = call.arguments.first?.string ?? ""
            try showUnlockDialog(for: id, pinentry: pinentry, vault: vault, bus: bus, window: window.utf8.count <= PromptInterface.windowIDLimit ? window : "")
            return []
        }
        // Nowhere to show a dialog: the prompt ends as dismissed, as the specification has a
        // prompt the user closed end, so that a client takes its own way on (git asks for the
        // password, keyring raises its locked error) instead of failing inside the library.
        // The way to open the vault goes to the daemon's log, once per prompt.
        prompts.remove(id)?.cancel()
        Self.log("a program asked to unlock the vault and no pinentry can be shown here: run `keychain unlock`")
        promptCompleted(id, dismissed: true, [])
        return []
    }

    /// `Completed` for prompt `id`: dismissed, or done with the paths of what it unlocked.
    func promptCompleted(_ id: String, dismissed: Bool, _ paths: [String]) {
        emit(ObjectPath.promptPath(id), PromptInterface.name, "Completed", [.boolean(dismissed), .variant(.paths(paths))])
    }

    /// Puts prompt `id` behind the dialog that is up, or shows one.
    private func showUnlockDialog(for id: String, pinentry: PinentryChoice, vault: Vault, bus: BusConnection, window: String) throws(ServiceError) {
        let dialog: UnlockDialog
        if let showing = prompts.dialog {
            dialog = showing
        } else {
            dialog = try UnlockDialog()
            bus.watch(dialog.wakeDescriptor) { [unowned self, dialog] in self.unlockDialogEnded(dialog) }
            dialog.start(
                vault: vault, choice: pinentry,
                description: "A program asks for your secrets. Enter the passphrase of the keychain vault \(vault.location.path) to unlock it for your session.",
                parentWindow: window)
        }
        prompts.wait(id, on: dialog)
    }

    /// On the bus thread, once `dialog` has ended: completes the prompts waiting on it.
    private func unlockDialogEnded(_ dialog: UnlockDialog) {
        guard let outcome = dialog.outcome else { return }
        bus?.unwatch(dialog.wakeDescriptor)
        // A dialog cancelled earlier (no prompt waited on it any more) ends with nothing to complete.
        guard let waiting = prompts.dialogEnded(dialog) else { return }
        let vaultCollections = collections.vaultCollections
        let unlocked = outcome == .unlocked && vaultCollections.allSatisfy { !$0.isLocked }
        if case .dismissed(let reason) = outcome { Self.log("the unlock prompt was dismissed: \(reason)") }
        for id in waiting.sorted() {
            promptCompleted(id, dismissed: !unlocked, unlocked ? vaultCollections.map { ObjectPath.collectionPath($0.name) } : [])
        }
        guard unlocked else { return }
        // Where the kernel keyring cannot hold the user's unlocked state, the unlock is this
        // daemon's alone: it ends it after the idle time (``followLockState(at:)``).
        if let vault, let limit = vault.configuration.userUnlockTimeout, vault.status().kernelKeyring != .available {
            ownUnlock = OwnUnlock(since: .now, limit: limit)
        }
        loadVaultContents()
        announceLockChanges()
    }

    /// One line on the daemon's standard error: what happened, never a value.
    static func log(_ line: String) {
        try? SystemCall.writeAll(STDERR_FILENO, "keychain: \(line)\n")
    }
}
