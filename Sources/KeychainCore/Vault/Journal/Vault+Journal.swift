/// The vault's journal as this process sees it: whether the vault is enrolled in sync, whether
/// a write journaled a change, who is told when one does, and the interface sync works
/// through (``JournaledVault``).
extension Vault {
    /// Whether the vault exists and is enrolled in a sync group (`keychain sync init` or
    /// `join`). Reads the vault's schema as last opened; creates nothing.
    package var isEnrolledInSync: Bool { ((try? vault(creating: false)) ?? nil)?.isEnrolledInSync ?? false }

    /// Whether a write by this process changed a synchronizable item of an enrolled vault
    /// (the change waits in the outbox until it is sent): a short-lived program sends it
    /// before it exits.
    package var journaledSyncChange: Bool { withSession { $0.journaledAChange } }

    /// Runs `body` on the vault's journal (the vault created first when `creating`, as a first
    /// write would), unlocking once with the configured passphrase if it finds the vault locked.
    ///
    /// - Throws: ``StoreError/noVault(path:)`` when there is none and `creating` is false.
    func withJournal<R>(creating: Bool, _ body: (any JournaledVault) throws(StoreError) -> R) throws(StoreError) -> R {
        try withOpened(creating: creating) { (engine) throws(StoreError) in try body(engine) }
    }

    /// Tells `observer` of every change a write of this process journals, until the id it
    /// returns is given to ``stopObservingJournal(_:)``. A consumer observing here (a sync
    /// engine running in this process) keeps the background start from starting another.
    func observeJournal(_ observer: @escaping @Sendable () -> Void) -> Int {
        withSession { $0.journalObservers.add(observer) }
    }

    /// Ends what ``observeJournal(_:)`` started.
    func stopObservingJournal(_ id: Int) {
        withSession { $0.journalObservers.remove(id) }
    }

    /// Starts the configured consumer of the journal (``VaultConfiguration/syncsInBackground``)
    /// the first time this process reads or writes a synchronizable item of a vault enrolled
    /// in sync.
    func syncInBackground(_ vault: VaultEngine) {
        guard configuration.syncsInBackground, vault.isEnrolledInSync else { return }
        // One lock decides: two threads meeting a first synchronizable item start one
        // consumer, and none starts beside one that already observes the journal here.
        let starts = withSession { (session: inout sending Session) -> Bool in
            defer { session.syncStarted = true }
            return !session.syncStarted && session.journalObservers.isEmpty
        }
        if starts { BackgroundSync.start(self) }
    }

    /// Tells the journal's observers of a journaled change, after the session's lock is let
    /// go; with none observing, the background consumer starts when the configuration allows it.
    func journaled(_ vault: VaultEngine) {
        let observers = withSession { (session: inout sending Session) -> [@Sendable () -> Void] in
            session.journaledAChange = true
            return session.journalObservers.all
        }
        for observer in observers { observer() }
        syncInBackground(vault)
    }
}
