/// What to find, as a `SecItemCopyMatching` query: a class, the attributes that must match
/// (every one named must match; one not named matches anything), how many results, and what
/// to return.
public struct Query: Sendable {
    /// How many matches a query returns (`kSecMatchLimitOne`, `kSecMatchLimitAll`).
    public enum Limit: Sendable, Hashable {
        /// The first match (`kSecMatchLimitOne`).
        case one
        /// Every match (`kSecMatchLimitAll`).
        case all
    }

    /// Nil matches items of every class.
    public var itemClass: ItemClass?
    /// The attributes an item must have; those left nil match anything.
    public var attributes: Attributes
    /// At most one match, or all of them.
    public var limit: Limit
    /// Whether results carry the decrypted value. When false, values are never decrypted.
    public var returnData: Bool
    /// Whether results carry every attribute. When false, results carry only what the query
    /// named, and a store may skip decrypting attributes its digests already matched.
    public var returnAttributes: Bool
    /// Who proves presence when a returned value needs it (``AccessControl``), as
    /// `kSecUseAuthenticationContext`; nil asks through a fresh context with the process
    /// default authenticator.
    public var authentication: AuthenticationContext?
    /// The attributes a caller reads from the results, when it reads only some
    /// (``Store/accounts(matching:)`` reads accounts): a store may then decode only those, and
    /// results may lack the others. Nil, the default, returns every attribute
    /// `returnAttributes` asks for. Only reads honour it; a write decodes whole records
    /// whatever its query says.
    var returnedFields: AttributeField.Mask?

    /// A query for items of `itemClass` (any class when nil) with `attributes`; `returnData` decrypts values, `returnAttributes` attributes; `authentication` gives the proof for values behind an access control.
    public init(
        _ itemClass: ItemClass? = nil, attributes: Attributes = Attributes(), limit: Limit = .all,
        returnData: Bool = false, returnAttributes: Bool = true, authentication: AuthenticationContext? = nil
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.limit = limit
        self.returnData = returnData
        self.returnAttributes = returnAttributes
        self.authentication = authentication
    }
}

extension Query {
    /// A query naming exactly `item`: its class and identity attributes (access group,
    /// service or server, account, synchronizable, and the internet fields), defaults filled in.
    public init(identifying item: Item) {
        let normalized = item.attributes.normalizedIdentity(for: item.itemClass)
        var attributes = Attributes()
        for field in AttributeField.identity(of: item.itemClass) { field.copy(from: normalized, to: &attributes) }
        self.init(item.itemClass, attributes: attributes)
    }
}

extension Query {
    /// A query naming what `item` names, as a `SecItemCopyMatching` query built from it would:
    /// its class and the identity attributes it sets; those it leaves unset match anything (an
    /// item stored with a path or an access group is found by a query that names neither), and
    /// an unset synchronizable matches only items that are not, as Apple's keychain does.
    public init(naming item: Item) {
        var attributes = Attributes()
        for field in AttributeField.identity(of: item.itemClass) where field.isSet(in: item.attributes) {
            field.copy(from: item.attributes, to: &attributes)
        }
        attributes.synchronizable = attributes.synchronizable ?? false
        self.init(item.itemClass, attributes: attributes)
    }
}

/// One write, for ``Store/write(_:)``: several are applied in one transaction, all or nothing.
public enum WriteOperation: Sendable {
    /// Adds an item; fails with ``StoreError/duplicateItem`` if one with the same identity exists.
    case add(Item)
    /// Replaces the value (when given) and the attributes the item names of the item with the
    /// same identity, or adds it if there is none.
    case upsert(Item)
    /// Changes every item matching the query: attributes named in `attributes` (which may move
    /// an item to another identity or accessibility) and, when given, the value.
    case update(Query, attributes: Attributes, value: SecretBytes?)
    /// Deletes every item matching the query; matching nothing is not an error.
    case delete(Query)
}

/// What a write did: how many items each operation touched.
public struct WriteResult: Sendable {
    /// How many items each operation wrote, in order.
    public var counts: [Int]
}
