/// The identity digests this process computed lately, by class and attributes: a program reads
/// the same few items again and again, and encoding plus HMAC is a third of a read. The digests
/// are not secret (the table stores them) and stay valid while the lookup key does; a rotation
/// forgets them. Bounded, and dropped whole when full.
struct IdentityMemo {
    private var digests: [IdentityMemoKey: [UInt8]] = [:]

    /// The digest of `key`, computed by `compute` when not remembered.
    mutating func digest(of key: IdentityMemoKey, _ compute: () throws(StoreError) -> [UInt8]) throws(StoreError) -> [UInt8] {
        if let digest = digests[key] { return digest }
        let digest = try compute()
        if digests.count >= 1_024 { digests.removeAll(keepingCapacity: true) }
        digests[key] = digest
        return digest
    }

    /// Forgets every digest: the lookup key they were made with is retired.
    mutating func forget() { digests.removeAll() }
}

/// What an identity digest depends on: the class and the attributes it was computed from.
struct IdentityMemoKey: Hashable {
    let itemClass: ItemClass
    /// The identity fields alone: the digest depends on nothing else, and a key holding an
    /// item's whole attributes would keep its label, comment and generic data in memory for as
    /// long as the memo lasts.
    let attributes: Attributes

    init(itemClass: ItemClass, attributes: Attributes) {
        self.itemClass = itemClass
        var identity = Attributes()
        for field in AttributeField.identity(of: itemClass) { field.copy(from: attributes, to: &identity) }
        self.attributes = identity
    }

    // Equal keys have equal attributes, hence equal fields here; hashing these few (what tells
    // items apart in practice) instead of all twenty-three costs a quarter of the lookup.
    func hash(into hasher: inout Hasher) {
        hasher.combine(itemClass)
        hasher.combine(attributes.account)
        hasher.combine(attributes.service)
        hasher.combine(attributes.server)
    }
}
