/// Sync as the vault sees it: whether it is enrolled, whether a write journaled a change, and
/// the one engine this process runs (started in the background, or woken by a write).
extension Vault {
    /// Whether the vault exists and is enrolled in a sync group (`keychain sync init` or
    /// `join`). Reads the vault's schema as last opened; creates nothing.
    package var isEnrolledInSync: Bool { ((try? vault(creating: false)) ?? nil)?.isEnrolledInSync ?? false }

    /// Whether a write by this process changed a synchronizable item of an enrolled vault
    /// (the change waits in the outbox until it is sent): a short-lived program sends it
    /// before it exits (``SyncEngine/sendNow(within:)``).
    package var journaledSyncChange: Bool { withSession { $0.journaledAChange } }

    /// Starts syncing in the background the first time this process reads or writes a
    /// synchronizable item of a vault enrolled in sync (``VaultConfiguration/syncsInBackground``).
    func syncInBackground(_ vault: VaultEngine) {
        guard configuration.syncsInBackground, vault.isEnrolledInSync else { return }
        // One lock decides: two threads meeting a first synchronizable item start one engine,
        // and none starts beside an engine this process already runs.
        let starts = withSession { (session: inout sending Session) -> Bool in
            defer { session.syncStarted = true }
            return !session.syncStarted && session.syncTrigger == nil
        }
        if starts { SyncEngine.startInBackground(self) }
    }

    /// Hands a journaled change to sync: the engine running in this process sends it at once;
    /// with none running, one starts in the background when the configuration allows it.
    func journaled(_ vault: VaultEngine) {
        withSession { (session: inout sending Session) -> (@Sendable () -> Void)? in
            session.journaledAChange = true
            return session.syncTrigger
        }?()
        syncInBackground(vault)
    }

    /// Sets what a write that journaled a change calls (nil when the engine stops): one engine
    /// running in this process at a time.
    func setSyncTrigger(_ trigger: (@Sendable () -> Void)?) {
        withSession { $0.syncTrigger = trigger }
    }
}
