import KeychainCore

/// `org.freedesktop.Secret.Item`, on `/org/freedesktop/secrets/collection/NAME/ID`.
enum ItemInterface {
    static let name = "org.freedesktop.Secret.Item"

    static let methods = [
        ServedMethod(name, "GetSecret", "o", "(oayays)", carriesSecret: true) { (daemon, call) throws(ServiceError) in
            let (collection, id, path) = try daemon.item(of: call)
            let session = try daemon.session(call.arguments[0].objectPath!, for: call.sender)
            guard !collection.isLocked else { throw .isLocked(path) }
            let record = try collection.record(id)
            return [try session.secretStruct(try collection.secret(id), contentType: record.contentType)]
        },
        ServedMethod(name, "SetSecret", "(oayays)", "") { (daemon, call) throws(ServiceError) in
            let (collection, id, path) = try daemon.item(of: call)
            let (value, contentType) = try daemon.openedSecret(call.arguments[0], sender: call.sender)
            guard !collection.isLocked else { throw .isLocked(path) }
            try collection.update(id, label: nil, attributes: nil, secret: value, contentType: contentType)
            daemon.itemChanged(collection, id, [])
            return []
        },
        ServedMethod(name, "Delete", "", "o") { (daemon, call) throws(ServiceError) in
            let (collection, id, path) = try daemon.item(of: call)
            guard !collection.isLocked else { throw .isLocked(path) }
            try collection.delete(id)
            daemon.emit(ObjectPath.collectionPath(collection.name), CollectionInterface.name, "ItemDeleted", [.objectPath(path)])
            daemon.itemsChanged(collection)
            return [.objectPath(ObjectPath.none)]
        },
    ]
}

extension SecretServiceDaemon {
    /// The item a call is made on: its collection, id, and path under the collection's own name.
    func item(of call: Call) throws(ServiceError) -> (collection: any SecretCollection, id: String, path: String) {
        guard case .item(_, _, let id) = call.object else { throw .noSuchObject(call.path) }
        let collection = try collection(call.object)
        return (collection, id, ObjectPath.itemPath(collection.name, id))
    }

    func itemProperties(_ collection: any SecretCollection, _ id: String) -> [Property] {
        [
            ("Locked", { () throws(ServiceError) in .boolean(collection.isLocked) }),
            ("Attributes", { () throws(ServiceError) in .stringMap(try collection.record(id).attributes) }),
            ("Label", { () throws(ServiceError) in .string(try collection.record(id).label) }),
            ("Created", { () throws(ServiceError) in .uint64(try collection.record(id).created) }),
            ("Modified", { () throws(ServiceError) in .uint64(try collection.record(id).modified) }),
        ]
    }

    func setItemProperty(_ name: String, _ value: BusValue, _ call: Call) throws(ServiceError) {
        guard case .item(_, _, let id) = call.object else { throw .noSuchObject(call.path) }
        let collection = try collection(call.object)
        switch name {
        case "Label":
            guard let label = value.string, label.utf8.count <= Self.textLimit else { throw .init(.invalidArgs, "Label is a string of at most \(Self.textLimit) bytes") }
            guard !collection.isLocked else { throw .isLocked(ObjectPath.itemPath(collection.name, id)) }
            try collection.update(id, label: label, attributes: nil, secret: nil, contentType: nil)
            itemChanged(collection, id, [("Label", .string(label))])
        case "Attributes":
            let attributes = try checkedAttributes(value)
            guard !collection.isLocked else { throw .isLocked(ObjectPath.itemPath(collection.name, id)) }
            try collection.update(id, label: nil, attributes: attributes, secret: nil, contentType: nil)
            itemChanged(collection, id, [("Attributes", .stringMap(attributes))])
        case "Locked", "Created", "Modified":
            throw .propertyReadOnly(name)
        default:
            throw .unknownProperty(ItemInterface.name, name)
        }
    }

    func itemChanged(_ collection: any SecretCollection, _ id: String, _ properties: [(String, BusValue)]) {
        let path = ObjectPath.itemPath(collection.name, id)
        if !properties.isEmpty { propertiesChanged(path, ItemInterface.name, properties) }
        emit(ObjectPath.collectionPath(collection.name), CollectionInterface.name, "ItemChanged", [.objectPath(path)])
    }
}
