import FoundationEssentials
import KeychainCore

/// The aliases clients set (`SetAlias`, `CreateCollection`'s alias, `default` made to name
/// another collection), kept in the vault so that they outlive the daemon: one row each beside
/// the collections' rows, access group ``VaultCollection/collectionGroup``, service `aliases`,
/// account the alias, the collection's name in `generic`; afterFirstUnlock, holding no secret.
///
/// `session` is never kept: it names the collection that lives in memory until the daemon stops.
enum StoredAliases {
    static let service = "aliases"

    /// Aliases the daemon keeps in memory only.
    static func isKept(_ alias: String) -> Bool { alias != "session" }

    private static func row(_ alias: String) -> Attributes {
        Attributes(service: service, account: alias, accessGroup: VaultCollection.collectionGroup, synchronizable: false)
    }

    /// Every stored alias and the collection it names, rows that name no collection included
    /// (the daemon leaves those out).
    /// - Throws: the vault's error when the rows cannot be read (a vault locked since boot).
    static func load(from store: any Store) throws(StoreError) -> [String: String] {
        let query = Query(.genericPassword, attributes: Attributes(service: service, accessGroup: VaultCollection.collectionGroup, synchronizable: false))
        let items: [Item]
        do throws(StoreError) {
            items = try store.copyMatching(query)
        } catch .itemNotFound {
            return [:]
        }
        var aliases: [String: String] = [:]
        for item in items {
            guard let alias = item.attributes.account, isKept(alias), let generic = item.attributes.generic else { continue }
            aliases[alias] = String(decoding: generic, as: UTF8.self)
        }
        return aliases
    }

    /// Stores `alias` as naming `collection`, replacing what it named.
    static func set(_ alias: String, to collection: String, in store: any Store) throws(StoreError) {
        guard isKept(alias) else { return }
        var attributes = row(alias)
        attributes.accessibility = .afterFirstUnlock
        attributes.generic = Data(collection.utf8)
        try store.upsert(Item(.genericPassword, attributes: attributes, value: SecretBytes(count: 0) { _ in }))
    }

    /// Removes `alias`'s row; nothing when there is none.
    static func remove(_ alias: String, from store: any Store) throws(StoreError) {
        do throws(StoreError) {
            try store.delete(Query(.genericPassword, attributes: row(alias)))
        } catch .itemNotFound {
            return
        }
    }
}
