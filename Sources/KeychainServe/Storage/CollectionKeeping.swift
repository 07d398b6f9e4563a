/// Where each kind of collection is kept, as ``SecretCollection/isKeptInVault`` declares it:
/// what `Service.Lock` and `Collection.Delete` ask, instead of the collection's type.
extension VaultCollection {
    var isKeptInVault: Bool { true }
}

extension MemoryCollection {
    var isKeptInVault: Bool { false }

    /// The `session` collection lasts as long as the daemon: it is never deleted.
    func deleteCollection() throws(ServiceError) {
        throw .init(.accessDenied, "the \(name) collection cannot be deleted: it is this session's")
    }
}
