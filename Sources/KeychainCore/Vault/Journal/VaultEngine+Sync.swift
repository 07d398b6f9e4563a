/// Sync's interface to an open vault (``JournaledVault``), each member one operation under the
/// engine's lock (the journal's side of each is in `VaultState+SyncJournal.swift` and
/// `VaultState+SyncOperations.swift`).
extension VaultEngine: JournaledVault {
    /// Whether the vault is enrolled in sync, as last checked.
    var isEnrolledInSync: Bool { locked { $0.syncEnrolled } }

    func enrollSync(device: [UInt8], state sync: SecretBytes) throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.enrollSync(device: device, state: sync) }
    }

    func leaveSync() throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.leaveSync() }
    }

    func readSyncState() throws(StoreError) -> SecretBytes? {
        try inUse { (state) throws(StoreError) in try state.readSyncState() }
    }

    func writeSyncState(_ sync: SecretBytes) throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.writeSyncState(sync) }
    }

    func outbox(limit: Int) throws(StoreError) -> (entries: [OutboxEntry], pending: Int, waiting: Int) {
        try inUse { (state) throws(StoreError) in try state.outbox(limit: limit) }
    }

    func outboxItems() throws(StoreError) -> (items: Int, locked: Int, lockedChanges: Int) {
        try inUse { (state) throws(StoreError) in try state.outboxItems() }
    }

    func acknowledge(_ entries: [OutboxEntry]) throws(StoreError) {
        guard !entries.isEmpty else { return }
        try inUse { (state) throws(StoreError) in try state.acknowledge(entries) }
    }

    func journalCount() throws(StoreError) -> Int {
        try inUse { (state) throws(StoreError) in try state.journalCount() }
    }

    func resend(where isMissing: (SyncChange) -> Bool) throws(StoreError) -> Int {
        try inUse { (state) throws(StoreError) in try state.resend(where: isMissing) }
    }

    func resendAll() throws(StoreError) {
        try inUse { (state) throws(StoreError) in try state.resendAll() }
    }

    func applyReceived(_ changes: [SyncChange], state sync: SecretBytes?) throws(StoreError) -> ApplyResult {
        try inUse { (state) throws(StoreError) in try state.applyReceived(changes, state: sync) }
    }
}
