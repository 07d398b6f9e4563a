/// What sync may ask of a vault, and all it may: the enrolment (its sync state sealed in the
/// vault), the outbox and what acknowledges it, what puts sent changes back in it, and the
/// applying of changes other devices made. Each member is one atomic operation of the vault's
/// (a read transaction or one write transaction), under the vault's own lock.
///
/// The vault declares it and `VaultEngine` keeps it; sync reaches it only through
/// ``Vault/withJournal(creating:_:)``, so the compiler keeps sync from calling anything else
/// of an open vault. Its values are the journal's own (``SyncChange``, ``OutboxEntry``,
/// ``ApplyResult``).
protocol JournaledVault {
    /// Adds the sync journal, this device's id and the sync state; every synchronizable item
    /// already in the vault goes into the outbox.
    ///
    /// - Throws: ``StoreError/duplicateItem`` when the vault is enrolled already.
    func enrollSync(device: [UInt8], state: SecretBytes) throws(StoreError)

    /// Removes the sync journal and state: the vault's items stay, and travel no more.
    func leaveSync() throws(StoreError)

    /// The sync state (the group's keys, the endpoints, the cursor); nil when not enrolled.
    func readSyncState() throws(StoreError) -> SecretBytes?

    /// Replaces the sync state.
    ///
    /// - Throws: ``StoreError/itemNotFound`` when the vault is not enrolled.
    func writeSyncState(_ state: SecretBytes) throws(StoreError)

    /// Pending changes with their values, whole units of at least `limit` changes (none when
    /// `limit` is 0); how many are pending in all, and how many wait for a class key.
    func outbox(limit: Int) throws(StoreError) -> (entries: [OutboxEntry], pending: Int, waiting: Int)

    /// What waits in the outbox by item: items, the items that wait for a class key, and
    /// their changes. A read.
    func outboxItems() throws(StoreError) -> (items: Int, locked: Int, lockedChanges: Int)

    /// Marks outbox entries as taken by etcd, each only if no newer write replaced it since.
    func acknowledge(_ entries: [OutboxEntry]) throws(StoreError)

    /// How many items the journal holds (pending or sent).
    func journalCount() throws(StoreError) -> Int

    /// Puts the sent changes `isMissing` picks back in the outbox; how many.
    func resend(where isMissing: (SyncChange) -> Bool) throws(StoreError) -> Int

    /// Puts every journaled change back in the outbox.
    func resendAll() throws(StoreError)

    /// Applies changes other devices made, newest wins, and stores `state` (the advanced
    /// cursor) in the same transaction.
    ///
    /// - Throws: ``StoreError/itemNotFound`` when the vault is not enrolled.
    func applyReceived(_ changes: [SyncChange], state: SecretBytes?) throws(StoreError) -> ApplyResult
}
