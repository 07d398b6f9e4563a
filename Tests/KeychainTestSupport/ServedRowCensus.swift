import KeychainCore

/// The rows of a vault's `sync` collection, by item id, read from the vault file as the next
/// process finds it: what a listing shows is the record rows; a whole item also has its secret
/// and one index row per attribute pair.
public struct ServedRowCensus {
    /// The ids with a record row (what the collection lists).
    public var items: Set<String> = []
    public var secrets: Set<String> = []
    /// How many index rows each id has.
    public var pairs: [String: Int] = [:]

    public init(_ path: String) throws {
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false, syncsInBackground: false))
        items = Set(try Self.accounts(vault, Attributes(service: "sync", accessGroup: "org.freedesktop.secrets.item", synchronizable: true)))
        secrets = Set(try Self.accounts(vault, Attributes(service: "sync", accessGroup: "org.freedesktop.secrets.secret", synchronizable: true)))
        for id in try Self.accounts(vault, Attributes(accessGroup: "org.freedesktop.secrets.attribute", synchronizable: true)) { pairs[id, default: 0] += 1 }
    }

    /// Listed items without their secret or without an index row of each of their `pairsPerItem` pairs.
    public func halfItems(pairsPerItem: Int) -> [String] { items.filter { !secrets.contains($0) || pairs[$0] != pairsPerItem }.sorted() }
    /// Secret and index rows of no listed item.
    public var orphans: [String] { secrets.union(pairs.keys).subtracting(items).sorted() }

    private static func accounts(_ vault: Vault, _ attributes: Attributes) throws(StoreError) -> [String] {
        let rows: [Item]
        do { rows = try vault.copyMatching(Query(.genericPassword, attributes: attributes)) } catch .itemNotFound { return [] }
        return rows.compactMap { $0.attributes.account }
    }
}
