/// The rows of the vault that travel as one: a Secret Service item that `keychain serve`
/// keeps is several rows (its secret, its record, one index row per attribute pair), all under
/// access groups of the `org.freedesktop.secrets.` family and all with the item's id as their
/// account, and every write of the item writes them together. The outbox sends every pending
/// row of one item in one etcd transaction or none of them, and a receiver applies an item's
/// version whole: the newest version of the item wins over every row the receiver holds of it.
/// Any other row is a unit of its own.
enum SyncUnit {
    static let groupPrefix = "org.freedesktop.secrets."

    /// The unit `attributes` (an item's, or a journal address) belongs to; nil for a row that
    /// travels alone.
    static func key(of attributes: Attributes) -> String? {
        guard let group = attributes.accessGroup, group.hasPrefix(groupPrefix), let account = attributes.account, !account.isEmpty else { return nil }
        return account
    }

    /// `items` put in groups of one unit each (a row alone is a group of one), in the order each
    /// group first appears.
    static func grouped<T>(_ items: [T], key: (T) -> String?) -> [[T]] {
        var groups: [[T]] = []
        var position: [String: Int] = [:]
        for item in items {
            guard let unit = key(item) else {
                groups.append([item])
                continue
            }
            if let index = position[unit] {
                groups[index].append(item)
            } else {
                position[unit] = groups.count
                groups.append([item])
            }
        }
        return groups
    }

    /// The row whose clock and origin order a unit's versions: its newest.
    static func newest(_ changes: [SyncChange]) -> SyncChange? {
        var best: SyncChange?
        for change in changes where best.map({ change.isNewer(thanClock: $0.clock, origin: $0.origin) }) ?? true { best = change }
        return best
    }
}

/// What applying received changes did to one item of ``SyncUnit`` (its id): what a daemon
/// that serves the item announces to its clients.
package struct SyncArrival: Sendable, Equatable {
    package enum Kind: Sendable, Equatable { case created, changed, deleted }
    /// The item's id (the account of its rows).
    package let item: String
    package let kind: Kind
}
