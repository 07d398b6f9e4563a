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
            // An imported item's dates are its source's until it changes here, as the daemon shows them.
            let kept = decoded?.dates
            let seconds = { (date: Date?) in UInt64(max(0, (date ?? .distantPast).timeIntervalSince1970)) }
            let changedHere = seconds(a.modificationDate) > seconds(a.creationDate)
            served.append(
                ServedItemRow(
                    collection: collection, id: id, label: a.label ?? "", attributes: decoded?.attributes ?? [:],
                    created: kept.map { Date(timeIntervalSince1970: Double($0.created)) } ?? a.creationDate,
                    modified: kept.map { changedHere ? a.modificationDate : Date(timeIntervalSince1970: Double($0.modified)) } ?? a.modificationDate))
        }
        return (served, others)
    }
}
