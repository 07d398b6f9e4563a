#if canImport(Glibc)
    import Glibc
#endif

/// Unlocks a vault when a call needs a class that is locked, with a passphrase nobody handed to
/// the call: the file `KEYCHAIN_PASSPHRASE_FILE` names, else a systemd credential
/// (`$CREDENTIALS_DIRECTORY/keychain-passphrase`), else, where the program asks for it and has a
/// controlling terminal, a no-echo prompt there. The one rule for a library program's vault
/// (``VaultConfiguration/passphraseEnvironment``, which never prompts) and the `keychain` command.
package struct Unlocker: Sendable {
    /// The environment that names the passphrase file or the credentials directory.
    package var environment: [String: String]
    /// What to ask on the controlling terminal when neither file offers a passphrase; nil never
    /// prompts (a library program, a daemon).
    package var terminalPrompt: String?

    /// An unlocker reading `environment`, prompting with `terminalPrompt` as the last resort.
    package init(environment: [String: String], terminalPrompt: String? = nil) {
        self.environment = environment
        self.terminalPrompt = terminalPrompt
    }

    /// Whether a passphrase could come from somewhere (without reading it or asking for it).
    package var offersPassphrase: Bool {
        PassphraseFile.isOffered(by: environment) || (terminalPrompt != nil && TerminalInput.hasControllingTerminal)
    }

    /// The passphrase from the first source that offers one; nil when none does.
    /// - Throws: as ``PassphraseFile/fromEnvironment(_:)`` does for a file or credential that
    ///   cannot be trusted or read, and ``StoreError/invalidArgument(_:)`` for a typed line too long.
    package func passphrase() throws(StoreError) -> SecretBytes? {
        if let passphrase = try PassphraseFile.fromEnvironment(environment) { return passphrase }
        guard let terminalPrompt else { return nil }
        return try TerminalInput.readSecret(prompt: terminalPrompt)
    }

    /// Unlocks `vault` when it has a passphrase and `accessibility` is locked; with nil (a listing,
    /// which reads whatever is open), when whenUnlocked items are locked and a passphrase is offered.
    /// - Returns: false when nothing needed unlocking, or when no source offers a passphrase and
    ///   `accessibility` is nil; true when it unlocked.
    /// - Throws: ``StoreError/locked`` when `accessibility` is locked and no source offers a
    ///   passphrase; ``StoreError/wrongPassphrase`` and the errors of ``passphrase()``.
    @discardableResult
    package func unlockIfNeeded(_ vault: Vault, for accessibility: Accessibility?) throws(StoreError) -> Bool {
        guard vault.hasPassphrase, !vault.isAvailable(accessibility ?? .whenUnlocked) else { return false }
        if accessibility == nil && !offersPassphrase { return false }
        guard try unlock(with: { (passphrase) throws(StoreError) in try vault.unlock(passphrase: passphrase) }) else {
            throw .locked
        }
        return true
    }

    /// Runs `unlock` with the passphrase from the first source that offers one.
    /// - Returns: false when no source offers one.
    func unlock(with unlock: (SecretBytes) throws(StoreError) -> Void) throws(StoreError) -> Bool {
        guard let passphrase = try passphrase() else { return false }
        try unlock(passphrase)
        return true
    }
}
