/// The service's signals that tell clients a collection changed, as gnome-keyring sends them:
/// `CollectionChanged` when its label is set and when it locks, beside the collection's own
/// `PropertiesChanged`.
extension SecretServiceDaemon {
    func collectionChanged(_ name: String) {
        emit(ObjectPath.root, ServiceInterface.name, "CollectionChanged", [.objectPath(ObjectPath.collectionPath(name))])
    }
}
