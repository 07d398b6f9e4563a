import KeychainCore

/// What clients are told when the vault locks or unlocks, whoever did it: a client
/// (`Service.Lock`, an unlock prompt), `keychain lock` or `keychain unlock` in another process,
/// a suspend or a session lock, the idle lock. As
/// gnome-keyring tells it, for each collection kept in the vault: `ItemChanged` for each of its
/// items, the service's `CollectionChanged`, then `PropertiesChanged` with the new `Locked` on
/// each item and on the collection.
///
/// Another process's lock reaches this one as a new stamp in the user's kernel keyring, and the
/// idle lock as the expiry of the user's unlocked state there. Neither wakes the daemon: the
/// keyring's change notifications are a kernel build option (`CONFIG_KEY_NOTIFICATIONS`) that
/// many kernels leave out. So the daemon looks once a second, a read of one key.
extension SecretServiceDaemon {
    /// The most items of one collection told of one by one; a larger collection is told of as
    /// a whole (its `CollectionChanged` and `PropertiesChanged`), so that a lock never queues
    /// hundreds of thousands of signals. Clients read an item's `Locked` afresh when they use it.
    static let itemSignalLimit = 10_000

    /// Looks at the vault's lock state at most once a second (the bus loop calls it between
    /// messages, however many come), and tells clients what changed; first ends the daemon's
    /// own unlock (``OwnUnlock``) once it went its idle time without a call. Not for a vault with an
    /// idle timeout of its process's own (`keychain serve` has none): each look would count as
    /// a use, and that lock would never come.
    func followLockState(at now: ContinuousClock.Instant) {
        guard vault?.configuration.idleTimeout == nil, lockAnnouncement.lookDue(at: now) else { return }
        if let ownUnlock, ownUnlock.hasLapsed(at: now, lastCall: lastActivity) {
            self.ownUnlock = nil
            // Not again when a lock (a client's, a suspend) ended it first.
            if let vault, vault.isAvailable(.whenUnlocked) {
                vault.lock()
                Self.log("locked the vault: no call for \(ownUnlock.limit.components.seconds) s since its pinentry unlocked it (the idle lock)")
            }
        }
        announceLockChanges()
    }

    /// Tells clients when the vault's lock state is not what they were last told; the first
    /// look only records it.
    func announceLockChanges() {
        guard let vault else { return }
        let locked = !vault.isAvailable(.whenUnlocked)
        guard lockAnnouncement.changed(to: locked) else { return }
        for collection in collections.all where collection.isKeptInVault { announce(collection, locked: locked) }
    }

    private func announce(_ collection: any SecretCollection, locked: Bool) {
        let path = ObjectPath.collectionPath(collection.name)
        let ids = (try? collection.itemIDs()) ?? []
        let items = ids.count <= Self.itemSignalLimit ? ids.map { ObjectPath.itemPath(collection.name, $0) } : []
        for item in items { emit(path, CollectionInterface.name, "ItemChanged", [.objectPath(item)]) }
        collectionChanged(collection.name)
        for item in items { propertiesChanged(item, ItemInterface.name, [("Locked", .boolean(locked))]) }
        propertiesChanged(path, CollectionInterface.name, [("Locked", .boolean(locked))])
    }
}
