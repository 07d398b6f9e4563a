/// The identity digests this process computed lately, by class and attributes: a program reads
/// the same few items again and again, and encoding plus HMAC is a third of a read. The digests
/// are not secret (the table stores them) and stay valid while the lookup key does: the memo
/// serves a digest only under the lookup key it was made with, and forgets them all as soon as
/// it is asked under another (a rotation here or in another process, a rotation rolled back, keys
/// dropped and loaded again). Bounded, and dropped whole when full.
struct IdentityMemo {
    private var digests: [IdentityMemoKey: [UInt8]] = [:]
    /// The lookup key the digests held were made with. Weak: the memo keeps no retired key in
    /// memory, and a key freed reads as nil, so that a new key at the same address is never
    /// taken for it.
    private weak var madeWith: HMACKey?

    /// The digest of `key` under `lookup`, computed by `compute` when not remembered under it.
    mutating func digest(
        of key: IdentityMemoKey, under lookup: HMACKey, _ compute: (HMACKey) throws(StoreError) -> [UInt8]
    ) throws(StoreError) -> [UInt8] {
        if madeWith !== lookup {
            digests.removeAll()
            madeWith = lookup
        } else if let digest = digests[key] {
            return digest
        }
        let digest = try compute(lookup)
        if digests.count >= 1_024 { digests.removeAll(keepingCapacity: true) }
        digests[key.remembered] = digest
        return digest
    }
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
