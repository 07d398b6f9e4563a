import FoundationEssentials
import KeychainCore

/// A collection kept in the vault (the persistent `login` collection): each Secret Service
/// item is vault rows of three kinds, all generic passwords under access groups of their own,
/// so that no Valet, Locksmith, UICKeyChainStore or Security query meets them unless it names
/// those groups on purpose:
///
/// - `org.freedesktop.secrets.secret`, service = collection, account = item id: the secret,
///   **whenUnlocked** (Apple's default class: readable while the user's vault is unlocked,
///   closed by `keychain lock` and the idle timeout).
/// - `org.freedesktop.secrets.item`, same service and account: the label, and the attributes
///   and content type sealed in `generic`; **afterFirstUnlock**, holding no secret, so that a
///   locked collection still lists its items and their attributes, as the specification allows.
/// - `org.freedesktop.secrets.attribute`, service = collection and one attribute pair
///   (``ItemRecordCoding/pairScope(collection:name:value:)``), account = item id, one row per
///   pair, afterFirstUnlock: the search index. The vault finds a service's rows by its digest
///   under the lookup key (its scope index), so `SearchItems` reads the rows of the pairs it
///   asks for and the items they name, never every item.
/// - `org.freedesktop.secrets.tally`: which items carry each pair (``PairTally``), so that a
///   search is a few reads by identity, never a read of the whole collection.
///
/// Every change is one vault transaction over all of an item's rows.
///
/// The synchronized collection (``synchronizedScope``, the `sync` alias) keeps the same rows
/// synchronizable, so that they travel through the vault's sync group as the vault's own
/// synchronizable items do; its searches go by the index rows, which travel with the items,
/// never by the tally, which only this daemon writes (``search(_:)``). As each row travels on
/// its own and the newest write of each wins, every change of one of its items writes all the
/// item's rows again (``update(_:label:attributes:secret:contentType:)``).
final class VaultCollection: SecretCollection {
    static let secretGroup = "org.freedesktop.secrets.secret"
    static let itemGroup = "org.freedesktop.secrets.item"
    static let attributeGroup = "org.freedesktop.secrets.attribute"
    /// One row per collection (service `collections`, account its name): its label and dates.
    static let collectionGroup = "org.freedesktop.secrets.collection"
    static let collectionsService = "collections"
    /// The service of the synchronized collection's rows, the same on every machine of the
    /// sync group whatever its object's name there; and its alias.
    static let synchronizedScope = "sync"

    let name: String
    /// The service its rows are kept under: its name, but for the synchronized collection,
    /// ``synchronizedScope``.
    let scope: String
    /// Whether its rows are synchronizable: they travel to every machine of the vault's sync
    /// group (and wait in the outbox until the vault joins one).
    let synchronizes: Bool
    let store: any Store
    private let defaultLabel: String
    let tally: PairTally
    /// Whether every item is on the tally's lists: once seen, it stays so, as this daemon keeps
    /// the lists from then on.
    private var listed = false

    /// `listLimit`: the most items a pair's id list names (``PairTally``).
    init(name: String, label: String, store: any Store, listLimit: Int = PairTally.defaultListLimit) {
        self.name = name
        scope = name
        synchronizes = false
        self.store = store
        defaultLabel = label
        tally = PairTally(collection: name, store: store, listLimit: listLimit)
    }

    /// The synchronized collection, served as `name` (`sync`, unless a collection created
    /// before took that name): rows under ``synchronizedScope``, synchronizable, and no tally.
    init(synchronizedAs name: String, label: String, store: any Store) {
        self.name = name
        scope = Self.synchronizedScope
        synchronizes = true
        self.store = store
        defaultLabel = label
        tally = PairTally(collection: Self.synchronizedScope, store: store, kept: false)
    }

    /// The vault's synchronized collection: `sync`, or `sync_1` when a collection created
    /// before took the name `sync` (a name `CreateCollection` never gives).
    static func synchronized(in store: any Store) -> VaultCollection {
        let taken = createdNames(in: store).contains(synchronizedScope)
        return VaultCollection(synchronizedAs: taken ? "\(synchronizedScope)_1" : synchronizedScope, label: "Synchronized", store: store)
    }

    private var path: String { "/org/freedesktop/secrets/collection/\(name)" }

    func attempt<R>(_ body: () throws(StoreError) -> R) throws(ServiceError) -> R {
        do {
            return try body()
        } catch {
            throw ServiceError(error, path: path)
        }
    }

    func named(_ group: String, _ service: String, _ account: String? = nil) -> Attributes {
        Attributes(service: service, account: account, accessGroup: group, synchronizable: synchronizes)
    }

    /// The items of one scope (access group and service), or none.
    private func rows(_ group: String, _ service: String) throws(ServiceError) -> [Item] {
        try attempt { () throws(StoreError) -> [Item] in
            do throws(StoreError) {
                return try store.copyMatching(Query(.genericPassword, attributes: named(group, service)))
            } catch .itemNotFound {
                return []
            }
        }
    }

    private func one(_ attributes: Attributes, value: Bool = false) throws(ServiceError) -> Item? {
        try attempt { () throws(StoreError) -> Item? in
            do throws(StoreError) {
                return try store.copyMatching(Query(.genericPassword, attributes: attributes, limit: .one, returnData: value)).first
            } catch .itemNotFound {
                return nil
            }
        }
    }

    func label() throws(ServiceError) -> String {
        try one(named(Self.collectionGroup, Self.collectionsService, scope))?.attributes.label ?? defaultLabel
    }

    func setLabel(_ label: String) throws(ServiceError) {
        var attributes = named(Self.collectionGroup, Self.collectionsService, scope)
        attributes.label = label
        attributes.accessibility = .afterFirstUnlock
        try attempt { () throws(StoreError) in try store.upsert(Item(.genericPassword, attributes: attributes, value: SecretBytes(count: 0) { _ in })) }
    }

    func dates() throws(ServiceError) -> (created: UInt64, modified: UInt64) {
        let attributes = try one(named(Self.collectionGroup, Self.collectionsService, scope))?.attributes
        let now = Date()
        return (Self.seconds(attributes?.creationDate ?? now), Self.seconds(attributes?.modificationDate ?? now))
    }

    var isLocked: Bool { !store.isAvailable(.whenUnlocked) }

    func itemIDs() throws(ServiceError) -> [String] {
        try rows(Self.itemGroup, scope).compactMap(\.attributes.account)
    }

    func search(_ attributes: [String: String]) throws(ServiceError) -> [String] {
        guard !attributes.isEmpty else { return try itemIDs() }
        var sizes: [String: Int] = [:]
        // Never complete for the synchronized collection, which keeps no tally: its index rows
        // are right whoever wrote them, the sync engine included.
        listed = listed || tally.isComplete
        if listed {
            // The smallest list names the candidates; their own sealed attributes decide on the other pairs.
            let sized = attributes.map { (pair: $0, size: tally.size($0.key, $0.value)) }
            for entry in sized { sizes[entry.pair.key] = entry.size.count }
            if let rarest = sized.filter(\.size.listed).min(by: { $0.size.count < $1.size.count }) {
                guard rarest.size.count > 0, case .items(let ids) = tally.posting(rarest.pair.key, rarest.pair.value) else { return [] }
                return try matching(ids, attributes)
            }
        }
        // A collection without items finds none. Asked first, as the same lookup every time, so
        // that a search of an empty collection without a tally (the synchronized one, unless
        // the machine syncs) never reads a pair's index rows: a lookup of a scope not read
        // before is held to the whole table (a count over every row of the vault).
        guard try one(named(Self.itemGroup, scope)) != nil else { return [] }
        guard let (key, value) = Self.mostSelective(attributes, counts: { name, _ in sizes[name] }) else { return try itemIDs() }
        // One pair's index rows name the candidates; each candidate's own sealed attributes
        // (one row read by its identity) decide on the others.
        let candidates = try rows(Self.attributeGroup, ItemRecordCoding.pairScope(collection: scope, name: key, value: value)).compactMap(\.attributes.account)
        return try matching(Set(candidates), attributes)
    }

    /// The ids of `candidates` whose items carry every pair of `attributes`, in order.
    private func matching(_ candidates: Set<String>, _ attributes: [String: String]) throws(ServiceError) -> [String] {
        candidates.sorted().filter { id in
            guard let record = try? record(id) else { return false }
            return attributes.allSatisfy { record.attributes[$0.key] == $0.value }
        }
    }

    /// The pair whose index rows a search reads: the one that names the fewest items by
    /// `counts` (``PairTally``). Between pairs of the same count (or none: nil), a pair that
    /// names a kind of item (libsecret's `xdg:schema`, which every item of a program has)
    /// comes last, then the longest value first (an id, a user name, a URL names fewer items
    /// than a port or a protocol).
    static func mostSelective(_ attributes: [String: String], counts: (String, String) -> Int?) -> (String, String)? {
        let counted = attributes.map { (pair: $0, count: counts($0.key, $0.value) ?? Int.max) }
        return counted.min { a, b in
            if a.count != b.count { return a.count < b.count }
            return precedes(a.pair, b.pair)
        }.map { ($0.pair.key, $0.pair.value) }
    }

    /// Between two pairs of the same count: whether `a` likely names fewer items than `b`.
    private static func precedes(_ a: (key: String, value: String), _ b: (key: String, value: String)) -> Bool {
        let kindA = a.key == "xdg:schema", kindB = b.key == "xdg:schema"
        if kindA != kindB { return kindB }
        if a.value.utf8.count != b.value.utf8.count { return a.value.utf8.count > b.value.utf8.count }
        return a.key < b.key
    }

    /// Counts the pairs of the items stored before their tallies were kept (``PairTally``).
    func countPairsIfNeeded() {
        tally.countIfNeeded { try itemIDs().map { (id: $0, attributes: try record($0).attributes) } }
    }

    func record(_ id: String) throws(ServiceError) -> SecretItemRecord {
        guard let item = try one(named(Self.itemGroup, scope, id)) else { throw .noSuchObject("\(path)/\(id)") }
        guard let generic = item.attributes.generic, let decoded = ItemRecordCoding.decode(generic) else {
            throw .init(.failed, "the vault row of \(path)/\(id) does not hold a Secret Service item's attributes")
        }
        let created = Self.seconds(item.attributes.creationDate ?? Date()), modified = Self.seconds(item.attributes.modificationDate ?? Date())
        // An imported item shows its source's dates until it changes here.
        let kept = decoded.dates
        return SecretItemRecord(
            label: item.attributes.label ?? "", attributes: decoded.attributes, contentType: decoded.contentType,
            created: kept?.created ?? created, modified: kept.map { modified > created ? modified : $0.modified } ?? modified, kept: kept)
    }

    func secret(_ id: String) throws(ServiceError) -> SecretBytes {
        guard let item = try one(named(Self.secretGroup, scope, id), value: true) else { throw .noSuchObject("\(path)/\(id)") }
        return item.value ?? SecretBytes(count: 0) { _ in }
    }

    /// The names of the collections created in `store` (`CreateCollection`), in name order;
    /// none while their rows cannot be read.
    static func createdNames(in store: any Store) -> [String] {
        (try? createdCollectionNames(in: store)) ?? []
    }

    /// The names of the collections created in `store`, in name order.
    /// - Throws: the vault's error when their rows cannot be read (locked since boot).
    static func createdCollectionNames(in store: any Store) throws(StoreError) -> [String] {
        let query = Query(.genericPassword, attributes: Attributes(service: collectionsService, accessGroup: collectionGroup, synchronizable: false))
        do throws(StoreError) {
            return try store.copyMatching(query).compactMap(\.attributes.account).sorted()
        } catch .itemNotFound {
            return []
        }
    }

    /// Deletes every item of the collection and its own row, in one write.
    /// - Throws: `AccessDenied` for the synchronized collection, which every machine of the
    ///   sync group serves: its items would go from all of them.
    func deleteCollection() throws(ServiceError) {
        guard !synchronizes else {
            throw .init(.accessDenied, "the \(name) collection cannot be deleted: it is the vault's synchronized collection, served on every machine of its sync group")
        }
        var operations: [WriteOperation] = [.delete(Query(.genericPassword, attributes: named(Self.collectionGroup, Self.collectionsService, scope)))]
        var removed: [(String, String, String)] = []
        for id in try itemIDs() {
            let (rows, pairs) = try deletion(of: id)
            operations += rows
            removed += pairs
        }
        operations += tally.changes(adding: [], removing: removed)
        try attempt { () throws(StoreError) in _ = try store.write(operations) }
    }

    func create(_ record: SecretItemRecord, secret: SecretBytes, replace: Bool) throws(ServiceError) -> (id: String, replaced: Bool) {
        if replace, let id = try search(record.attributes).first(where: { (try? self.record($0).attributes) == record.attributes }) {
            try update(id, label: record.label, attributes: nil, secret: secret, contentType: record.contentType)
            return (id, true)
        }
        if synchronizes, ServedSync.isDeviceRemoved {
            throw .init(
                .accessDenied,
                "this machine was removed from its sync group: the \(name) collection takes no new items, which would never reach the other machines (to rejoin: keychain sync leave, then keychain sync join with a new invitation)"
            )
        }
        // A 64-bit id taken already is all but impossible; a second draw settles it.
        for attempt in 1...3 {
            let id = ItemID.make()
            var operations: [WriteOperation] = [.add(secretRow(id, secret)), .add(itemRow(id, record))]
            operations += record.attributes.map { .add(pairRow(id, $0.key, $0.value)) }
            operations += tally.changes(adding: record.attributes.map { (id, $0.key, $0.value) }, removing: [])
            do throws(StoreError) {
                try store.write(operations)
                return (id, false)
            } catch .duplicateItem where attempt < 3 {
                continue
            } catch {
                throw ServiceError(error, path: path)
            }
        }
        throw .init(.failed, "no free item id")
    }

    func update(_ id: String, label: String?, attributes: [String: String]?, secret: SecretBytes?, contentType: String?) throws(ServiceError) {
        let old = try record(id)
        var new = old
        if let label { new.label = label }
        if let attributes { new.attributes = attributes }
        if let contentType { new.contentType = contentType }
        var operations: [WriteOperation] = []
        // A synchronized item's secret is written again too (all its rows are: below), so that
        // an edit newer than another machine's delete brings the whole item back, not a record
        // without its secret.
        if let secret = secret ?? (synchronizes ? try? self.secret(id) : nil) {
            operations.append(.update(Query(.genericPassword, attributes: named(Self.secretGroup, scope, id)), attributes: Attributes(), value: secret))
        }
        var changed = Attributes()
        changed.label = new.label
        changed.generic = ItemRecordCoding.encode(attributes: new.attributes, contentType: new.contentType, dates: new.kept)
        operations.append(.update(Query(.genericPassword, attributes: named(Self.itemGroup, scope, id)), attributes: changed, value: nil))
        if synchronizes {
            // Every index row of the item written again with its record: each row travels on
            // its own and the newest write of each wins, so a record that wins is never left
            // without an index row that another machine's older edit deleted.
            operations += old.attributes.filter { new.attributes[$0.key] != $0.value }.map {
                .delete(Query(.genericPassword, attributes: pairRow(id, $0.key, $0.value).attributes))
            }
            operations += new.attributes.map { .upsert(pairRow(id, $0.key, $0.value)) }
        } else if new.attributes != old.attributes {
            operations += old.attributes.map { .delete(Query(.genericPassword, attributes: pairRow(id, $0.key, $0.value).attributes)) }
            operations += new.attributes.map { .add(pairRow(id, $0.key, $0.value)) }
            operations += tally.changes(adding: new.attributes.map { (id, $0.key, $0.value) }, removing: old.attributes.map { (id, $0.key, $0.value) })
        }
        try attempt { () throws(StoreError) in _ = try store.write(operations) }
    }

    func delete(_ id: String) throws(ServiceError) {
        let (rows, pairs) = try deletion(of: id)
        let operations = rows + tally.changes(adding: [], removing: pairs)
        try attempt { () throws(StoreError) in _ = try store.write(operations) }
    }

    /// The deletes of every row of the item, and the (id, name, value) pairs it had.
    private func deletion(of id: String) throws(ServiceError) -> (rows: [WriteOperation], pairs: [(String, String, String)]) {
        let old = try record(id)
        let rows: [WriteOperation] = [
            .delete(Query(.genericPassword, attributes: named(Self.secretGroup, scope, id))),
            .delete(Query(.genericPassword, attributes: named(Self.itemGroup, scope, id))),
        ]
        let pairs = old.attributes.map { (id, $0.key, $0.value) }
        return (rows + pairs.map { .delete(Query(.genericPassword, attributes: pairRow(id, $0.1, $0.2).attributes)) }, pairs)
    }

    // MARK: - Rows (an item's three kinds; extensions that write items build them here)

    func secretRow(_ id: String, _ secret: SecretBytes) -> Item {
        var attributes = named(Self.secretGroup, scope, id)
        attributes.accessibility = .whenUnlocked
        return Item(.genericPassword, attributes: attributes, value: secret)
    }

    func itemRow(_ id: String, _ record: SecretItemRecord) -> Item {
        var attributes = named(Self.itemGroup, scope, id)
        attributes.accessibility = .afterFirstUnlock
        attributes.label = record.label
        attributes.generic = ItemRecordCoding.encode(attributes: record.attributes, contentType: record.contentType, dates: record.kept)
        return Item(.genericPassword, attributes: attributes, value: SecretBytes(count: 0) { _ in })
    }

    func pairRow(_ id: String, _ key: String, _ value: String) -> Item {
        var attributes = named(Self.attributeGroup, ItemRecordCoding.pairScope(collection: scope, name: key, value: value), id)
        attributes.accessibility = .afterFirstUnlock
        return Item(.genericPassword, attributes: attributes, value: SecretBytes(count: 0) { _ in })
    }

    private static func seconds(_ date: Date) -> UInt64 { UInt64(max(0, date.timeIntervalSince1970)) }
}
