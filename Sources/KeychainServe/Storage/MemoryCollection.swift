import FoundationEssentials
import KeychainCore

/// The `session` collection: items kept in this process's memory only (secrets in
/// ``SecretBytes``), gone when the daemon stops, as the specification's session collection is.
/// Never locked. Searched by scanning: it holds what one login session stored.
final class MemoryCollection: SecretCollection {
    let name: String
    private var currentLabel: String
    private let created = UInt64(Date().timeIntervalSince1970)
    private var modified = UInt64(Date().timeIntervalSince1970)
    private var items: [String: (record: SecretItemRecord, secret: SecretBytes)] = [:]
    /// Ids in creation order, so that listings are stable.
    private var order: [String] = []

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

    func create(_ record: SecretItemRecord, secret: SecretBytes, replace: Bool) -> (id: String, replaced: Bool) {
        let now = UInt64(Date().timeIntervalSince1970)
        if replace, let id = order.first(where: { items[$0]?.record.attributes == record.attributes }), let old = items[id] {
            var replaced = record
            replaced.created = old.record.created
            replaced.modified = now
            items[id] = (replaced, secret)
            touch()
            return (id, true)
        }
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
        if let label { item.record.label = label }
        if let attributes { item.record.attributes = attributes }
        if let secret { item.secret = secret }
        if let contentType { item.record.contentType = contentType }
        item.record.modified = UInt64(Date().timeIntervalSince1970)
        items[id] = item
        touch()
    }

    func delete(_ id: String) throws(ServiceError) {
        guard items.removeValue(forKey: id) != nil else { throw .noSuchObject(id) }
        order.removeAll { $0 == id }
        touch()
    }

    private func touch() { modified = UInt64(Date().timeIntervalSince1970) }
}
