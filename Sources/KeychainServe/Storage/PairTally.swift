import FoundationEssentials
import KeychainCore

/// Which items of a vault collection carry each attribute pair: what makes a search a few
/// lookups by identity. The vault finds rows by identity through an index its ledger covers; a
/// read by scope (every item id under one pair) is held to the table by a count over the whole
/// table the first time each scope is read, which grows with the collection.
///
/// One vault row per pair (access group `org.freedesktop.secrets.tally`, service the pair's
/// scope, account `ids`): the ids of the items that carry it in its value, their number in
/// `generic` (read without the value); afterFirstUnlock, as the index it summarises, so that a
/// locked collection still searches. Only the daemon that owns the bus name writes them, one
/// call at a time, each in the same vault transaction as the items it describes. A pair carried
/// by more than ``listLimit`` items (a program's service, libsecret's `xdg:schema`) keeps only
/// its number: a store then rewrites lists of bounded size, whatever the collection's, and a
/// search reads another pair's list, or the scope of a pair that names that many items anyway.
///
/// A collection whose items were stored before these rows were kept has them made once
/// (``countIfNeeded(_:)``), with a marker row that says every item is listed; without the
/// marker, searches go by scope as before.
///
/// The synchronized collection keeps none (``kept`` false): its items also arrive through the
/// sync engine, which writes the items' rows and knows nothing of these lists, and lists that
/// travelled themselves would lose ids whenever two machines changed one pair at once (the
/// newest list wins whole). Its searches go by the index rows, which travel with the items.
struct PairTally {
    static let group = "org.freedesktop.secrets.tally"
    /// The most ids one pair's row lists, unless told otherwise.
    static let defaultListLimit = 1_000

    let collection: String
    let store: any Store
    /// The most ids one pair's row lists.
    var listLimit = Self.defaultListLimit
    /// Whether the collection keeps a tally: when not, it is never complete and no write
    /// changes it (``changes(adding:removing:)`` is empty).
    var kept = true

    /// What the tally knows of one pair.
    enum Posting: Equatable {
        /// The items that carry it (none when it has no row).
        case items(Set<String>)
        /// Only how many items carry it: more than ``PairTally/listLimit`` did once.
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
        kept && (try? store.copyMatching(Query(.genericPassword, attributes: marker, limit: .one))) != nil
    }

    /// How many items carry the pair, and whether their ids are listed, read without the
    /// list; none, listed, when it has no row (or one it cannot read).
    func size(_ name: String, _ value: String) -> (count: Int, listed: Bool) {
        guard let item = row(name, value, withList: false) else { return (0, true) }
        return Self.size(item)
    }

    /// What the tally holds for the pair; no items when it has no row (or one it cannot read).
    func posting(_ name: String, _ value: String) -> Posting {
        guard let item = row(name, value, withList: true) else { return .items([]) }
        let (count, listed) = Self.size(item)
        guard listed, let list = item.value else { return .count(count) }
        return .items(list.withUnsafeBytes(Self.decode))
    }

    private func row(_ name: String, _ value: String, withList: Bool) -> Item? {
        (try? store.copyMatching(Query(.genericPassword, attributes: attributes(name, value), limit: .one, returnData: withList)))?.first
    }

    /// `generic`: "L" and the number of a listed pair, "C" and the number of a counted one.
    private static func size(_ item: Item) -> (count: Int, listed: Bool) {
        let text = item.attributes.generic.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return (Int(text.dropFirst()) ?? 0, text.hasPrefix("L"))
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
        guard kept, !isComplete, let all = try? items() else { return }
        var done = marker
        done.accessibility = .afterFirstUnlock
        let rows = changes(adding: all.flatMap { item in item.attributes.map { (item.id, $0.key, $0.value) } }, removing: [], from: { _, _ in .items([]) })
        _ = try? store.write(rows + [.upsert(Item(.genericPassword, attributes: done, value: SecretBytes(count: 0) { _ in }))])
    }

    /// The writes that bring the rows up to date after the `added` (item id, name, value)
    /// pairs are stored and the `removed` ones deleted, to go in the same vault transaction.
    func changes(adding added: [(String, String, String)], removing removed: [(String, String, String)]) -> [WriteOperation] {
        guard kept else { return [] }
        return changes(adding: added, removing: removed, from: posting)
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
                stored = now.count > listLimit ? .count(now.count) : .items(now)
            case .count(let count):
                stored = .count(max(0, count + change.add.count - change.remove.count))
            }
            let row = attributes(key.name, key.value)
            guard stored.size > 0 else { return .delete(Query(.genericPassword, attributes: row)) }
            var listed = row
            listed.accessibility = .afterFirstUnlock
            let value: SecretBytes
            if case .items(let ids) = stored {
                value = Self.encode(ids)
                listed.generic = Data("L\(ids.count)".utf8)
            } else {
                value = SecretBytes(count: 0) { _ in }
                listed.generic = Data("C\(stored.size)".utf8)
            }
            return .upsert(Item(.genericPassword, attributes: listed, value: value))
        }
    }

    private struct PairKey: Hashable {
        let name: String
        let value: String
    }
}
