import FoundationEssentials
import KeychainCore

/// The `session` collection: items kept in this process's memory only (secrets in
/// ``SecretBytes``), gone when the daemon stops, as the specification's session collection is.
/// Never locked. Searched by scanning: it holds what one login session stored.
///
/// Bounded, since any client may store in it and what it holds stays after the client left:
/// at most ``itemLimit`` items and ``byteLimit`` bytes in all (secrets, labels, attributes), a
/// secret at most ``secretLimit`` bytes (as a vault item's value). A store past a bound is
/// refused with `LimitsExceeded`, and nothing is kept of it.
final class MemoryCollection: SecretCollection {
    static let itemLimit = 10_000
    static let byteLimit = 32 << 20
    static let secretLimit = 1 << 20

    let name: String
    private var currentLabel: String
    private let created = UInt64(Date().timeIntervalSince1970)
    private var modified = UInt64(Date().timeIntervalSince1970)
    private var items: [String: (record: SecretItemRecord, secret: SecretBytes)] = [:]
    /// Ids in creation order, so that listings are stable.
    private var order: [String] = []
    /// What the items hold, in bytes, as the bounds count it.
    private(set) var bytes = 0

    init(name: String, label: String) {
        self.name = name
        currentLabel = label
    }

    func label() -> String { currentLabel }
    func setLabel(_ label: String) {
        currentLabel = label
        touch()
    }
    func dates() -> (created: UInt64, modified: UInt64) { (created, modified) }
    var isLocked: Bool { false }
    func itemIDs() -> [String] { order }

    func search(_ attributes: [String: String]) -> [String] {
        order.filter { id in attributes.allSatisfy { items[id]?.record.attributes[$0.key] == $0.value } }
    }

    func record(_ id: String) throws(ServiceError) -> SecretItemRecord {
        guard let item = items[id] else { throw .noSuchObject(id) }
        return item.record
    }

    func secret(_ id: String) throws(ServiceError) -> SecretBytes {
        guard let item = items[id] else { throw .noSuchObject(id) }
        return item.secret
    }

    /// The bytes an item counts for.
    private static func size(_ record: SecretItemRecord, _ secret: SecretBytes) -> Int {
        secret.count + record.label.utf8.count + record.contentType.utf8.count + record.attributes.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }

    /// Checks that an item of `size` bytes may take the place of one of `freed` bytes (none for a new item).
    private func checkRoom(_ secret: SecretBytes?, size: Int, freed: Int, adding: Bool) throws(ServiceError) {
        if let secret, secret.count > Self.secretLimit {
            throw .init(.invalidArgs, "a secret of the \(name) collection is at most \(Self.secretLimit) bytes")
        }
        if adding && items.count >= Self.itemLimit {
            throw .init(.limitsExceeded, "the \(name) collection is full (\(Self.itemLimit) items): delete some of its items, or store in login")
        }
        if bytes - freed + size > Self.byteLimit {
            throw .init(.limitsExceeded, "the \(name) collection is full (\(Self.byteLimit >> 20) MiB in all): delete some of its items, or store in login")
        }
    }

    func create(_ record: SecretItemRecord, secret: SecretBytes, replace: Bool) throws(ServiceError) -> (id: String, replaced: Bool) {
        let now = UInt64(Date().timeIntervalSince1970)
        let size = Self.size(record, secret)
        if replace, let id = order.first(where: { items[$0]?.record.attributes == record.attributes }), let old = items[id] {
            try checkRoom(secret, size: size, freed: Self.size(old.record, old.secret), adding: false)
            bytes += size - Self.size(old.record, old.secret)
            var replaced = record
            replaced.created = old.record.created
            replaced.modified = now
            items[id] = (replaced, secret)
            touch()
            return (id, true)
        }
        try checkRoom(secret, size: size, freed: 0, adding: true)
        bytes += size
        var id = ItemID.make()
        while items[id] != nil { id = ItemID.make() }
        var stored = record
        stored.created = now
        stored.modified = now
        items[id] = (stored, secret)
        order.append(id)
        touch()
        return (id, false)
    }

    func update(_ id: String, label: String?, attributes: [String: String]?, secret: SecretBytes?, contentType: String?) throws(ServiceError) {
        guard var item = items[id] else { throw .noSuchObject(id) }
        let before = Self.size(item.record, item.secret)
        if let label { item.record.label = label }
        if let attributes { item.record.attributes = attributes }
        if let secret { item.secret = secret }
        if let contentType { item.record.contentType = contentType }
        let after = Self.size(item.record, item.secret)
        try checkRoom(secret, size: after, freed: before, adding: false)
        bytes += after - before
        item.record.modified = UInt64(Date().timeIntervalSince1970)
        items[id] = item
        touch()
    }

    func delete(_ id: String) throws(ServiceError) {
        guard let gone = items.removeValue(forKey: id) else { throw .noSuchObject(id) }
        bytes -= Self.size(gone.record, gone.secret)
        order.removeAll { $0 == id }
        touch()
    }

    private func touch() { modified = UInt64(Date().timeIntervalSince1970) }
}
