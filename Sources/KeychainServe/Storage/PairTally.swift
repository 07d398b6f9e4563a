import FoundationEssentials
import KeychainCore

/// Which items of a vault collection carry each attribute pair: what makes a search a few
/// lookups by identity. The vault finds rows by identity through an index its ledger covers; a
/// read by scope (every item id under one pair) is held to the table by a count over the whole
/// table the first time each scope is read, which grows with the collection.
///
/// One vault row per pair (access group `org.freedesktop.secrets.tally`, service the pair's
/// scope, account `ids`): the ids of the items that carry it in its value, their number in
/// `generic`; afterFirstUnlock, as the index it summarises, so that a locked collection still
/// searches. Only the daemon that owns the bus name writes them, one call at a time, each in
/// the same vault transaction as the items it describes. A pair carried by more than
/// ``listLimit`` items keeps only its number: such a pair names too many items to be worth
/// listing, and a search reads another pair's list or the pair's scope instead.
///
/// A collection whose items were stored before these rows were kept has them made once
/// (``countIfNeeded(_:)``), with a marker row that says every item is listed; without the
/// marker, searches go by scope as before.
struct PairTally {
    static let group = "org.freedesktop.secrets.tally"
    /// The most ids one pair's row lists (well under the vault's largest value).
    static let listLimit = 40_000

    let collection: String
    let store: any Store

    /// What the tally knows of one pair.
    enum Posting: Equatable {
        /// The items that carry it (none when it has no row).
        case items(Set<String>)
        /// Only how many items carry it: more than ``PairTally/listLimit``.
        case count(Int)

        var size: Int {
            switch self {
            case .items(let ids): ids.count
            case .count(let count): count
            }
        }
    }

    private func attributes(_ name: String, _ value: String) -> Attributes {
        Attributes(
            service: ItemRecordCoding.pairScope(collection: collection, name: name, value: value), account: "ids", accessGroup: Self.group,
            synchronizable: false)
    }

    /// The marker row that says every item of the collection is listed.
    private var marker: Attributes {
        Attributes(service: "\(collection)/", account: "complete", accessGroup: Self.group, synchronizable: false)
    }

    /// Whether every item of the collection is listed (the marker row is there).
    var isComplete: Bool {
        (try? store.copyMatching(Query(.genericPassword, attributes: marker, limit: .one))) != nil
    }

    /// What the tally holds for the pair; no items when it has no row (or one it cannot read).
    func posting(_ name: String, _ value: String) -> Posting {
        let query = Query(.genericPassword, attributes: attributes(name, value), limit: .one, returnData: true)
        guard let item = (try? store.copyMatching(query))?.first else { return .items([]) }
        let count = item.attributes.generic.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        guard let value = item.value, value.count > 0 else { return .count(count) }
        return .items(value.withUnsafeBytes(Self.decode))
    }

    /// The ids of a row's value: each a length byte and that many ASCII bytes.
    private static func decode(_ bytes: UnsafeRawBufferPointer) -> Set<String> {
        var ids = Set<String>()
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            guard length > 0, offset + 1 + length <= bytes.count else { break }
            ids.insert(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset + 1..<offset + 1 + length]), as: UTF8.self))
            offset += 1 + length
        }
        return ids
    }

    private static func encode(_ ids: Set<String>) -> SecretBytes {
        var bytes: [UInt8] = []
        for id in ids.sorted() {
            bytes.append(UInt8(id.utf8.count))
            bytes += id.utf8
        }
        return SecretBytes(bytes)
    }

    /// Lists the items `items` returns (id and attributes) in one write, with the marker,
    /// unless the collection is listed already; `items` is called only then. A failure (a
    /// vault locked since boot) leaves things as they were: searches go by scope.
    func countIfNeeded(_ items: () throws -> [(id: String, attributes: [String: String])]) {
        guard !isComplete, let all = try? items() else { return }
        var done = marker
        done.accessibility = .afterFirstUnlock
        let rows = changes(adding: all.flatMap { item in item.attributes.map { (item.id, $0.key, $0.value) } }, removing: [], from: { _, _ in .items([]) })
        _ = try? store.write(rows + [.upsert(Item(.genericPassword, attributes: done, value: SecretBytes(count: 0) { _ in }))])
    }

    /// The writes that bring the rows up to date after the `added` (item id, name, value)
    /// pairs are stored and the `removed` ones deleted, to go in the same vault transaction.
    func changes(adding added: [(String, String, String)], removing removed: [(String, String, String)]) -> [WriteOperation] {
        changes(adding: added, removing: removed, from: posting)
    }

    private func changes(
        adding added: [(String, String, String)], removing removed: [(String, String, String)], from current: (String, String) -> Posting
    ) -> [WriteOperation] {
        var touched: [PairKey: (add: Set<String>, remove: Set<String>)] = [:]
        for (id, name, value) in added { touched[PairKey(name: name, value: value), default: ([], [])].add.insert(id) }
        for (id, name, value) in removed { touched[PairKey(name: name, value: value), default: ([], [])].remove.insert(id) }
        return touched.sorted { ($0.key.name, $0.key.value) < ($1.key.name, $1.key.value) }.compactMap { key, change in
            let stored: Posting
            switch current(key.name, key.value) {
            case .items(let ids):
                let now = ids.subtracting(change.remove).union(change.add)
                stored = now.count > Self.listLimit ? .count(now.count) : .items(now)
            case .count(let count):
                stored = .count(max(0, count + change.add.count - change.remove.count))
            }
            let row = attributes(key.name, key.value)
            guard stored.size > 0 else { return .delete(Query(.genericPassword, attributes: row)) }
            var listed = row
            listed.accessibility = .afterFirstUnlock
            listed.generic = Data(String(stored.size).utf8)
            let value: SecretBytes
            if case .items(let ids) = stored { value = Self.encode(ids) } else { value = SecretBytes(count: 0) { _ in } }
            return .upsert(Item(.genericPassword, attributes: listed, value: value))
        }
    }

    private struct PairKey: Hashable {
        let name: String
        let value: String
    }
}
