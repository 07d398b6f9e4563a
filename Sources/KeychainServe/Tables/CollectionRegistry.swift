/// The collections the daemon serves, in the order `Collections` lists them, and the aliases
/// naming them.
///
/// Its rules: a name is served once; an alias names a collection that is served (removing a
/// collection removes the aliases naming it).
struct CollectionRegistry {
    /// The most collections served at once.
    static let limit = 64

    private var byName: [String: any SecretCollection] = [:]
    /// Collection names in the order `Collections` lists them.
    private(set) var names: [String] = []
    /// Alias to collection name.
    private(set) var aliases: [String: String] = [:]

    init(_ collections: [any SecretCollection]) {
        for collection in collections { add(collection) }
    }

    var count: Int { names.count }
    func contains(_ name: String) -> Bool { byName[name] != nil }
    func named(_ name: String) -> (any SecretCollection)? { byName[name] }

    /// Every collection, in order.
    var all: [any SecretCollection] { names.compactMap { byName[$0] } }
    /// The collections kept in the vault, in order.
    var vaultCollections: [VaultCollection] { names.compactMap { byName[$0] as? VaultCollection } }

    /// Serves `collection` after the others; false (and nothing changes) when its name is
    /// served already.
    @discardableResult
    mutating func add(_ collection: any SecretCollection) -> Bool {
        guard byName[collection.name] == nil else { return false }
        byName[collection.name] = collection
        names.append(collection.name)
        return true
    }

    /// Stops serving `name`, and forgets the aliases that named it.
    mutating func remove(_ name: String) {
        guard byName.removeValue(forKey: name) != nil else { return }
        names.removeAll { $0 == name }
        aliases = aliases.filter { $0.value != name }
    }

    /// The collection `alias` names, if it names one served.
    func resolve(alias: String) -> (any SecretCollection)? { aliases[alias].flatMap { byName[$0] } }

    /// Makes `alias` name `name`; false (and nothing changes) when no such collection is served.
    @discardableResult
    mutating func setAlias(_ alias: String, to name: String) -> Bool {
        guard byName[name] != nil else { return false }
        aliases[alias] = name
        return true
    }

    mutating func removeAlias(_ alias: String) { aliases[alias] = nil }

    /// The collection an object path names (by name or alias), or the collection of the item it names.
    func collection(_ object: ObjectPath) throws(ServiceError) -> any SecretCollection {
        let name: String, alias: Bool
        switch object {
        case .collection(let n, let a): (name, alias) = (n, a)
        case .item(let n, let a, _): (name, alias) = (n, a)
        default: throw .noSuchObject("\(object)")
        }
        guard let collection = alias ? resolve(alias: name) : byName[name] else {
            throw .noSuchObject(alias ? "\(ObjectPath.root)/aliases/\(name)" : ObjectPath.collectionPath(name))
        }
        return collection
    }
}
