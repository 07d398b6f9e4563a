import FoundationEssentials
import KeychainCore

/// The vault rows `keychain serve` keeps, as listings show them: one entry per Secret Service
/// item (its collection, id, label and attributes, from its item row) instead of the several
/// rows each item is kept in (``VaultCollection``); the index, tally and collection rows are
/// the daemon's bookkeeping, not items of anyone.
package struct ServedItemRow {
    /// The collection's name and the item's id: `login/077a6c55e611b3d1`, the end of its object path.
    package let collection: String
    package let id: String
    package let label: String
    package let attributes: [String: String]
    package let created: Date?
    package let modified: Date?

    /// Whether `item` is one of the rows `keychain serve` keeps.
    package static func isServed(_ item: Item) -> Bool {
        item.attributes.accessGroup?.hasPrefix("org.freedesktop.secrets.") == true
    }

    /// The served items among `items`, one per item row, and the items that are not served
    /// rows, in their order.
    package static func split(_ items: [Item]) -> (served: [ServedItemRow], others: [Item]) {
        var served: [ServedItemRow] = [], others: [Item] = []
        for item in items {
            guard isServed(item) else {
                others.append(item)
                continue
            }
            let a = item.attributes
            guard a.accessGroup == VaultCollection.itemGroup, let collection = a.service, let id = a.account else { continue }
            let decoded = a.generic.flatMap { ItemRecordCoding.decode($0) }
            served.append(
                ServedItemRow(
                    collection: collection, id: id, label: a.label ?? "", attributes: decoded?.attributes ?? [:], created: a.creationDate,
                    modified: a.modificationDate))
        }
        return (served, others)
    }
}
