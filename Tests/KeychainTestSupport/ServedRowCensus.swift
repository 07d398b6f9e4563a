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

    /// Reads the vault at `path` in one query, so in one read of SQLite's: three reads would let
    /// a receiving serve apply whole units between them, and what the first read missed would
    /// show as parts of no item.
    public init(_ path: String) throws {
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false, syncsInBackground: false))
        let rows: [Item]
        do {
            rows = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(synchronizable: true), returnAttributes: true))
        } catch .itemNotFound {
            rows = []
        }
        for row in rows {
            guard let id = row.attributes.account else { continue }
            switch (row.attributes.accessGroup, row.attributes.service) {
            case ("org.freedesktop.secrets.item", "sync"): items.insert(id)
            case ("org.freedesktop.secrets.secret", "sync"): secrets.insert(id)
            case ("org.freedesktop.secrets.attribute", _): pairs[id, default: 0] += 1
            default: break
            }
        }
    }

    /// Listed items without their secret or without an index row of each of their `pairsPerItem` pairs.
    public func halfItems(pairsPerItem: Int) -> [String] { items.filter { !secrets.contains($0) || pairs[$0] != pairsPerItem }.sorted() }
    /// Secret and index rows of no listed item.
    public var orphans: [String] { secrets.union(pairs.keys).subtracting(items).sorted() }
}
