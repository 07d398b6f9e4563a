/// A place that keeps keychain items: the embedded vault or the Secret Service.
///
/// Semantics follow the Apple Keychain: a query matches every attribute it names; adding a
/// duplicate fails; each call is atomic; ``write(_:)`` applies several operations in one
/// transaction, all or nothing.
public protocol Store: AnyObject, Sendable {
    /// Adds an item. Throws ``StoreError/duplicateItem`` if one with the same identity exists.
    func add(_ item: Item) throws(StoreError)

    /// The items matching `query` (at most one with `.one`); throws ``StoreError/itemNotFound``
    /// when none match.
    func copyMatching(_ query: Query) throws(StoreError) -> [Item]

    /// Hands each item matching `query` to `body` in turn, as ``copyMatching(_:)`` would
    /// list them, without building the list: for a listing that keeps only part of each item
    /// (Valet's `allKeys()` keeps the accounts). Throws ``StoreError/itemNotFound`` when none
    /// match, and whatever `body` throws, which stops the listing.
    ///
    /// `body` may run while the store holds its lock: it must not call the store.
    func forEachMatching(_ query: Query, _ body: (Item) throws(StoreError) -> Void) throws(StoreError)

    /// Whether any item matches `query`. Stores answer without decrypting values where they can.
    func contains(_ query: Query) throws(StoreError) -> Bool

    /// Changes the items matching `query`; throws ``StoreError/itemNotFound`` if none match.
    /// Only the attributes set in `attributes` change; the value changes when given.
    @discardableResult
    func update(_ query: Query, attributes: Attributes, value: SecretBytes?) throws(StoreError) -> Int

    /// Deletes the items matching `query` and returns how many; zero is not an error.
    @discardableResult
    func delete(_ query: Query) throws(StoreError) -> Int

    /// Applies `operations` in order in one transaction: all of them, or none.
    @discardableResult
    func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteResult

    /// Whether items of `accessibility` can be read and written right now (unlocked, class available).
    func isAvailable(_ accessibility: Accessibility) -> Bool

    /// Whether items under an ``AccessControl`` can be written and read now: the store
    /// supports them and the prerequisites (a passphrase, for the vault) are met.
    var supportsAccessControl: Bool { get }
}

extension Store {
    /// By default a store cannot bind items to a proof of presence.
    public var supportsAccessControl: Bool { false }

    /// By default, the items ``copyMatching(_:)`` lists, one by one.
    public func forEachMatching(_ query: Query, _ body: (Item) throws(StoreError) -> Void) throws(StoreError) {
        for item in try copyMatching(query) { try body(item) }
    }

    /// The accounts of the items matching `query`, in the order they are listed, each taken
    /// as its item is read and nothing else of it decoded: what the faces' `allKeys` list.
    /// Items without an account are left out; throws ``StoreError/itemNotFound`` when none match.
    package func accounts(matching query: Query) throws(StoreError) -> [String] {
        var query = query
        query.returnedFields = AttributeField.Mask([.account])
        var accounts: [String] = []
        try forEachMatching(query) { (item: Item) throws(StoreError) in
            if let account = item.attributes.account { accounts.append(account) }
        }
        return accounts
    }

    public func contains(_ query: Query) throws(StoreError) -> Bool {
        var one = query
        one.limit = .one
        one.returnData = false
        do {
            return try !copyMatching(one).isEmpty
        } catch .itemNotFound {
            return false
        }
    }

    public func add(_ item: Item) throws(StoreError) {
        try write([.add(item)])
    }

    @discardableResult
    public func update(_ query: Query, attributes: Attributes, value: SecretBytes?) throws(StoreError) -> Int {
        try write([.update(query, attributes: attributes, value: value)]).counts[0]
    }

    @discardableResult
    public func delete(_ query: Query) throws(StoreError) -> Int {
        try write([.delete(query)]).counts[0]
    }

    /// Adds the item, or replaces the value and named attributes of the one with its identity.
    public func upsert(_ item: Item) throws(StoreError) {
        try write([.upsert(item)])
    }
}
