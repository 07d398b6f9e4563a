import KeychainCore

/// `keychain serve`'s own interface on the synchronized collection (the `sync` alias): where
/// this machine stands in its sync group, for a client that wants to tell its user why the
/// collection takes no new items.
enum SyncCollectionInterface {
    static let name = SecretServiceOwner.identityInterface + ".Sync"
    /// Its read-only properties, for introspection: `RemovedFromGroup`, when this machine found
    /// itself removed from its sync group (seconds since 1970), 0 while it is a member.
    static let properties: [(String, String, Bool)] = [("RemovedFromGroup", "t", false)]
}

extension SecretServiceDaemon {
    func syncCollectionProperties() -> [Property] {
        [("RemovedFromGroup", { () throws(ServiceError) in .uint64(ServedSync.removedAt.withLock { $0 }) })]
    }
}
