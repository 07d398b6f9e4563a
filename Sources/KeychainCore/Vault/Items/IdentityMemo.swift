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
        digests[key.remembered] = digest
        return digest
    }

    /// Forgets every digest: the lookup key they were made with is retired.
    mutating func forget() { digests.removeAll() }
}

/// What an identity digest depends on: the class and the identity fields of the attributes it
/// was computed from, compared as the digest sees them (text byte for byte).
struct IdentityMemoKey: Hashable {
    let itemClass: ItemClass
    /// As a lookup gives them (copying them for every lookup would cost more than the digest
    /// saves); the identity fields alone once the memo keeps the key (``remembered``).
    let attributes: Attributes

    init(itemClass: ItemClass, attributes: Attributes) {
        self.itemClass = itemClass
        self.attributes = attributes
    }

    /// The key as the memo keeps it: the identity fields alone, so that no label, comment or
    /// generic data of an item stays in memory for as long as the memo lasts.
    var remembered: IdentityMemoKey {
        var identity = Attributes()
        for field in AttributeField.identity(of: itemClass) { field.copy(from: attributes, to: &identity) }
        return IdentityMemoKey(itemClass: itemClass, attributes: identity)
    }

    static func == (lhs: IdentityMemoKey, rhs: IdentityMemoKey) -> Bool {
        lhs.itemClass == rhs.itemClass && AttributeField.identity(of: lhs.itemClass).allSatisfy { $0.sameValue(in: lhs.attributes, and: rhs.attributes) }
    }

    // Keys equal by bytes are equal by Swift's comparison too, so hashing these fields agrees
    // with ==; hashing these few (what tells items apart in practice) instead of all
    // twenty-three costs a quarter of the lookup.
    func hash(into hasher: inout Hasher) {
        hasher.combine(itemClass)
        hasher.combine(attributes.account)
        hasher.combine(attributes.service)
        hasher.combine(attributes.server)
    }
}
