import KeychainCore

/// Signals for what sync brought, as for a client's own changes: `ItemCreated`, `ItemChanged`
/// and `ItemDeleted` from the synchronized collection, and its `PropertiesChanged` (Items)
/// when items came or went, so that clients that keep copies (Seahorse, libsecret's
/// collection objects) drop deleted items and read new labels.
extension SecretServiceDaemon {
    func itemsArrived(_ arrivals: [SyncArrival]) {
        guard !arrivals.isEmpty,
            let collection = collections.vaultCollections.first(where: \.synchronizes)
        else { return }
        let path = ObjectPath.collectionPath(collection.name)
        for arrival in arrivals {
            let member =
                switch arrival.kind {
                case .created: "ItemCreated"
                case .changed: "ItemChanged"
                case .deleted: "ItemDeleted"
                }
            emit(path, CollectionInterface.name, member, [.objectPath(ObjectPath.itemPath(collection.name, arrival.item))])
        }
        if arrivals.contains(where: { $0.kind != .changed }) { itemsChanged(collection) }
    }
}
