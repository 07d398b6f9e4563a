import KeychainCore

/// `org.freedesktop.Secret.Collection`, on `/org/freedesktop/secrets/collection/NAME` and
/// under each alias that names it.
enum CollectionInterface {
    static let name = "org.freedesktop.Secret.Collection"
    static let labelProperty = "org.freedesktop.Secret.Item.Label"
    static let attributesProperty = "org.freedesktop.Secret.Item.Attributes"

    static let methods = [
        ServedMethod(name, "SearchItems", "a{ss}", "ao") { (daemon, call) throws(ServiceError) in
            let collection = try daemon.collection(call.object)
            return [.paths(try collection.search(try daemon.checkedAttributes(call.arguments[0])).map { ObjectPath.itemPath(collection.name, $0) })]
        },
        ServedMethod(name, "CreateItem", "a{sv}(oayays)b", "oo") { (daemon, call) throws(ServiceError) in try daemon.createItem(call) },
        ServedMethod(name, "Delete", "", "o") { (daemon, call) throws(ServiceError) in try daemon.deleteCollection(call) },
    ]
}

extension SecretServiceDaemon {
    fileprivate func createItem(_ call: Call) throws(ServiceError) -> [BusValue] {
        let collection = try collection(call.object)
        let a = call.arguments
        guard !collection.isLocked else { throw .isLocked(ObjectPath.collectionPath(collection.name)) }
        var record = SecretItemRecord(label: "", attributes: [:], contentType: "")
        for (key, value) in a[0].stringKeyedEntries ?? [] {
            switch key {
            case CollectionInterface.labelProperty:
                guard let label = value.variantContents?.string, label.utf8.count <= Self.textLimit else {
                    throw .init(.invalidArgs, "\(key) is a string of at most \(Self.textLimit) bytes")
                }
                record.label = label
            case CollectionInterface.attributesProperty:
                record.attributes = try checkedAttributes(value.variantContents!)
            default:
                // Other properties (Type, from newer clients) are not kept.
                continue
            }
        }
        let (value, contentType) = try openedSecret(a[1], sender: call.sender)
        record.contentType = contentType
        let (id, replaced) = try collection.create(record, secret: value, replace: a[2].boolean!)
        let path = ObjectPath.itemPath(collection.name, id)
        emit(ObjectPath.collectionPath(collection.name), CollectionInterface.name, replaced ? "ItemChanged" : "ItemCreated", [.objectPath(path)])
        if !replaced { itemsChanged(collection) }
        return [.objectPath(path), .objectPath(ObjectPath.none)]
    }

    fileprivate func deleteCollection(_ call: Call) throws(ServiceError) -> [BusValue] {
        let collection = try collection(call.object)
        guard collection.isKeptInVault, collection.name != "login" else {
            throw .init(.accessDenied, "the \(collection.name) collection cannot be deleted: it is \(collection.isKeptInVault ? "the vault's" : "this session's")")
        }
        guard !collection.isLocked else { throw .isLocked(ObjectPath.collectionPath(collection.name)) }
        try collection.deleteCollection()
        collections.remove(collection.name)
        emit(ObjectPath.root, ServiceInterface.name, "CollectionDeleted", [.objectPath(ObjectPath.collectionPath(collection.name))])
        propertiesChanged(ObjectPath.root, ServiceInterface.name, [], invalidated: ["Collections"])
        return [.objectPath(ObjectPath.none)]
    }

    /// The secret of a `(oayays)` struct the client sent, opened with its session: the plain
    /// value and its content type.
    func openedSecret(_ secret: BusValue, sender: String) throws(ServiceError) -> (SecretBytes, String) {
        guard case .structure(let fields) = secret, fields.count == 4, let path = fields[0].objectPath, let parameters = fields[1].bytes,
            let value = fields[2].bytes, let contentType = fields[3].string
        else { throw .init(.invalidArgs, "a secret is a struct (oayays)") }
        guard contentType.utf8.count <= 255 else { throw .init(.invalidArgs, "the content type is longer than 255 bytes") }
        return (try session(path, for: sender).open(parameters: parameters, value: value), contentType)
    }

    func collectionProperties(_ collection: any SecretCollection) -> [Property] {
        [
            ("Items", { () throws(ServiceError) in .paths(try collection.itemIDs().map { ObjectPath.itemPath(collection.name, $0) }) }),
            ("Label", { () throws(ServiceError) in .string(try collection.label()) }),
            ("Locked", { () throws(ServiceError) in .boolean(collection.isLocked) }),
            ("Created", { () throws(ServiceError) in .uint64(try collection.dates().created) }),
            ("Modified", { () throws(ServiceError) in .uint64(try collection.dates().modified) }),
        ]
    }

    func setCollectionProperty(_ name: String, _ value: BusValue, _ call: Call) throws(ServiceError) {
        let collection = try collection(call.object)
        switch name {
        case "Label":
            guard let label = value.string, label.utf8.count <= Self.textLimit else { throw .init(.invalidArgs, "Label is a string of at most \(Self.textLimit) bytes") }
            try collection.setLabel(label)
            propertiesChanged(ObjectPath.collectionPath(collection.name), CollectionInterface.name, [("Label", .string(label))])
            collectionChanged(collection.name)
        case "Items", "Locked", "Created", "Modified":
            throw .propertyReadOnly(name)
        default:
            throw .unknownProperty(CollectionInterface.name, name)
        }
    }

    /// Tells clients that a collection's `Items` changed, without the list: building it reads
    /// every item, which a store or a delete must not cost.
    func itemsChanged(_ collection: any SecretCollection) {
        propertiesChanged(ObjectPath.collectionPath(collection.name), CollectionInterface.name, [], invalidated: ["Items"])
    }
}
