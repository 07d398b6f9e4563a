import FoundationEssentials
import KeychainCore

/// Secret Service items moved into and out of the vault in bulk, stored as `keychain serve`
/// keeps them (``VaultCollection``): what `keychain migrate --foreign` does when a user
/// switches providers. Every change to the vault is one write: all or nothing.
package enum ServedItems {
    /// One item as a provider shows it, and where it came from.
    package struct Entry: Sendable {
        /// Where it came from (an object path of the provider, or a vault collection and id):
        /// what to delete from the source once it moved.
        package var source: String
        package var label: String
        package var attributes: [String: String]
        package var secret: SecretBytes
        package var contentType: String
        /// `Created` and `Modified` as the source shows them (seconds since the epoch; 0: not shown).
        package var created: UInt64
        package var modified: UInt64

        package init(source: String, label: String, attributes: [String: String], secret: SecretBytes, contentType: String, created: UInt64 = 0, modified: UInt64 = 0) {
            self.source = source
            self.label = label
            self.attributes = attributes
            self.secret = secret
            self.contentType = contentType
            self.created = created
            self.modified = modified
        }

        /// The dates kept with the item in the vault; none when the source shows none.
        var keptDates: ItemRecordCoding.KeptDates? {
            created == 0 ? nil : ItemRecordCoding.KeptDates(created: created, modified: max(modified, created))
        }
    }

    /// The items of one collection and the collection they belong in: `login` for the
    /// provider's default one, else the vault collection with that label.
    package struct Group: Sendable {
        package var label: String
        package var isDefault: Bool
        package var entries: [Entry]

        package init(label: String, isDefault: Bool, entries: [Entry]) {
            self.label = label
            self.isDefault = isDefault
            self.entries = entries
        }
    }

    /// What an import would do, or did.
    package struct ImportPlan {
        /// The whole change, for one vault write.
        fileprivate var operations: [WriteOperation] = []
        package var added = 0
        package var replaced = 0
        package var kept = 0
        /// Items whose attributes an item of their vault collection has exactly.
        package var conflicts = 0
        /// The labels of the vault collections it makes.
        package var createdCollections: [String] = []
        /// The sources of the items it adds or replaces: what leaves the provider after.
        package var moved: [String] = []
        /// Items an earlier run wrote and did not delete from the source (found with their
        /// label, attributes and secret): they only leave the source now.
        package var alreadyThere = 0
        /// Labels of source items with the attributes of another of their collection: each
        /// is kept, as an item of its own.
        package var sharingIdentity: [String] = []
        /// Where each moved item is in the vault, to be read back before the source loses it.
        fileprivate var written: [Written] = []
    }

    /// A source item and the vault item that holds it after the write.
    fileprivate struct Written {
        let source: String
        let collection: String
        let id: String
        let secret: SecretBytes
    }

    /// The most collections a vault keeps, as `CreateCollection` allows.
    static let collectionLimit = 64

    /// Plans the import of `groups` into `vault` under `rule`: conflicts are items with
    /// the attributes of one already in the collection they go to (``isSameItem(_:_:)``); under
    /// ``ItemTransfer/ConflictRule/refuse`` they are counted (``ImportPlan/conflicts``) and
    /// the plan must not be committed.
    /// - Throws: the vault's errors (``StoreError/locked`` while its items cannot be read),
    ///   ``StoreError/invalidArgument(_:)`` beyond ``collectionLimit`` collections.
    package static func planImport(_ groups: [Group], into vault: any Store, rule: ItemTransfer.ConflictRule) throws(StoreError) -> ImportPlan {
        var plan = ImportPlan()
        var names = Dictionary(uniqueKeysWithValues: try createdCollections(in: vault).map { ($0.label, $0.name) })
        var taken = Set(names.values).union(["login", "session"])
        var ids = Set<String>()
        for group in groups where !group.entries.isEmpty {
            let name: String
            if group.isDefault {
                name = "login"
            } else if let existing = names[group.label] {
                name = existing
            } else {
                name = collectionName(label: group.label, taken: taken)
                guard taken.count - 2 < collectionLimit else {
                    throw .invalidArgument("the vault keeps at most \(collectionLimit) collections and the provider has more")
                }
                taken.insert(name)
                names[group.label] = name
                plan.createdCollections.append(group.label)
                var row = Attributes(service: VaultCollection.collectionsService, account: name, accessGroup: VaultCollection.collectionGroup, synchronizable: false)
                row.label = group.label
                row.accessibility = .afterFirstUnlock
                plan.operations.append(.upsert(Item(.genericPassword, attributes: row, value: SecretBytes(count: 0) { _ in })))
            }
            let collection = VaultCollection(name: name, label: "", store: vault)
            var pairs: [(String, String, String)] = []
            // Vault items this plan already answers for: one vault item stands for one source
            // item, so that two source items of one identity never fall on the same vault item.
            var claimed = Set<String>()
            // The group's earlier entries by their attributes without a schema, which two
            // entries ``isSameItem(_:_:)`` calls the same share: each entry is compared with
            // those alone, not with every entry before it.
            var earlier: [[String: String]: [[String: String]]] = [:]
            for entry in group.entries {
                let unschemed = entry.attributes.filter { $0.key != schemaKey }
                if earlier[unschemed, default: []].contains(where: { isSameItem($0, entry.attributes) }) { plan.sharingIdentity.append(entry.label) }
                earlier[unschemed, default: []].append(entry.attributes)
                let record = SecretItemRecord(label: entry.label, attributes: entry.attributes, contentType: entry.contentType, kept: entry.keptDates)
                let matching = try sameAttributes(entry.attributes, in: collection).filter { !claimed.contains($0) }
                // Moved by an earlier run that stopped before it deleted it from the source.
                var copy: String?
                for id in matching where try isCopy(entry, of: id, in: collection) {
                    copy = id
                    break
                }
                if let there = copy {
                    claimed.insert(there)
                    plan.alreadyThere += 1
                    plan.moved.append(entry.source)
                    plan.written.append(Written(source: entry.source, collection: name, id: there, secret: entry.secret))
                    continue
                }
                if let same = matching.first {
                    switch rule {
                    case .refuse:
                        plan.conflicts += 1
                    case .keep:
                        plan.kept += 1
                    case .replace:
                        claimed.insert(same)
                        plan.replaced += 1
                        plan.moved.append(entry.source)
                        plan.written.append(Written(source: entry.source, collection: name, id: same, secret: entry.secret))
                        plan.operations.append(
                            .update(Query(.genericPassword, attributes: collection.named(VaultCollection.secretGroup, name, same)), attributes: Attributes(), value: entry.secret))
                        var changed = Attributes()
                        changed.label = record.label
                        changed.generic = ItemRecordCoding.encode(attributes: record.attributes, contentType: record.contentType, dates: record.kept)
                        plan.operations.append(
                            .update(Query(.genericPassword, attributes: collection.named(VaultCollection.itemGroup, name, same)), attributes: changed, value: nil))
                    }
                    continue
                }
                var id = ItemID.make()
                while !ids.insert(id).inserted { id = ItemID.make() }
                plan.added += 1
                plan.moved.append(entry.source)
                plan.written.append(Written(source: entry.source, collection: name, id: id, secret: entry.secret))
                plan.operations += [.add(collection.secretRow(id, entry.secret)), .add(collection.itemRow(id, record))]
                plan.operations += entry.attributes.map { .add(collection.pairRow(id, $0.key, $0.value)) }
                pairs += entry.attributes.map { (id, $0.key, $0.value) }
            }
            plan.operations += collection.tally.changes(adding: pairs, removing: [])
        }
        return plan
    }

    /// Writes a plan in one vault write: all or nothing.
    /// - Throws: ``StoreError/duplicateItem`` for a plan with conflicts under refuse (nothing
    ///   written), and the vault's errors (nothing written): a value larger than its limit,
    ///   a locked class.
    package static func commit(_ plan: ImportPlan, to vault: any Store) throws(StoreError) {
        guard plan.conflicts == 0 else { throw .duplicateItem }
        guard !plan.operations.isEmpty else { return }
        try vault.write(plan.operations)
    }

    /// The ids of the items of `collection` that ``isSameItem(_:_:)`` says `attributes` names.
    private static func sameAttributes(_ attributes: [String: String], in collection: VaultCollection) throws(StoreError) -> [String] {
        let found: [String]
        do { found = try collection.search(attributes.filter { $0.key != schemaKey }) } catch { throw storeError(error) }
        var same: [String] = []
        for id in found {
            do {
                if isSameItem(try collection.record(id).attributes, attributes) { same.append(id) }
            } catch {
                throw storeError(error)
            }
        }
        return same
    }

    /// Whether the vault item `id` is `entry` as it is: label, attributes, content type and secret.
    private static func isCopy(_ entry: Entry, of id: String, in collection: VaultCollection) throws(StoreError) -> Bool {
        do throws(ServiceError) {
            let record = try collection.record(id)
            guard record.label == entry.label, isSameItem(record.attributes, entry.attributes), record.contentType == entry.contentType else { return false }
            return try collection.secret(id) == entry.secret
        } catch {
            throw storeError(error)
        }
    }

    /// The sources of `plan` whose secret the vault now holds, read back after the write:
    /// only those may leave the source.
    package static func held(_ plan: ImportPlan, in vault: any Store) -> [String] {
        plan.written.filter { written in
            let collection = VaultCollection(name: written.collection, label: "", store: vault)
            return (try? collection.secret(written.id)) == written.secret
        }.map(\.source)
    }

    private static let schemaKey = "xdg:schema"

    /// Whether two items' attributes are the same item's: equal, except that an `xdg:schema`
    /// only one of them has is not counted: gnome-keyring shows `secret-tool`'s items without
    /// one, and with `org.freedesktop.Secret.Generic` once it has read its file again, and
    /// libsecret's lookups without a schema match either.
    package static func isSameItem(_ a: [String: String], _ b: [String: String]) -> Bool {
        guard let schemaA = a[schemaKey], let schemaB = b[schemaKey] else {
            return a.filter { $0.key != schemaKey } == b.filter { $0.key != schemaKey }
        }
        return schemaA == schemaB && a == b
    }

    private static func storeError(_ error: ServiceError) -> StoreError {
        error.name == .isLocked ? .locked : .io(error.message)
    }

    /// The name `CreateCollection` gives a collection labelled `label`: the label's ASCII
    /// letters and digits, lowercased (at most 32), then a number to tell it from `taken`.
    static func collectionName(label: String, taken: Set<String>) -> String {
        let stem = String(
            String.UnicodeScalarView(label.lowercased().unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }.prefix(32)))
        let base = stem.isEmpty ? "collection" : stem
        var name = base
        var number = 2
        while taken.contains(name) {
            name = base + "_\(number)"
            number += 1
        }
        return name
    }

    /// The collections `CreateCollection` (or an import) made in the vault: name and label.
    private static func createdCollections(in vault: any Store) throws(StoreError) -> [(name: String, label: String)] {
        let query = Query(
            .genericPassword, attributes: Attributes(service: VaultCollection.collectionsService, accessGroup: VaultCollection.collectionGroup, synchronizable: false))
        let rows: [Item]
        do { rows = try vault.copyMatching(query) } catch .itemNotFound { return [] }
        return rows.compactMap { row in row.attributes.account.map { ($0, row.attributes.label ?? "") } }.filter { $0.name != "login" && $0.name != "session" }
    }

    // MARK: - Out of the vault

    /// One vault collection's items, secrets included.
    package struct Collection: Sendable {
        /// Its name in the vault (`login`, or a created one).
        package var name: String
        package var label: String
        /// `login`: the provider's default collection is where its items go.
        package var isLogin: Bool { name == "login" }
        package var entries: [Entry]
    }

    /// Every item `keychain serve` keeps in `vault`, by collection (login first); the
    /// sources are `collection/id`.
    /// - Throws: ``StoreError/locked`` while the secrets cannot be read, and the vault's errors.
    package static func read(from vault: any Store) throws(StoreError) -> [Collection] {
        var result: [Collection] = []
        let login = VaultCollection(name: "login", label: "Login", store: vault)
        let collections = [(login, "")] + (try createdCollections(in: vault)).map { (VaultCollection(name: $0.name, label: $0.label, store: vault), $0.label) }
        for (collection, label) in collections {
            var entries: [Entry] = []
            do {
                for id in try collection.itemIDs() {
                    let record = try collection.record(id)
                    let secret = try collection.secret(id)
                    entries.append(
                        Entry(
                            source: "\(collection.name)/\(id)", label: record.label, attributes: record.attributes, secret: secret, contentType: record.contentType,
                            created: record.created, modified: record.modified))
                }
            } catch {
                throw storeError(error)
            }
            result.append(Collection(name: collection.name, label: collection.name == "login" ? "Login" : label, entries: entries))
        }
        return result
    }

    /// How many items the synchronized collection holds: they stay in the vault when the others
    /// move to another provider.
    package static func synchronizedItemCount(in vault: any Store) throws(StoreError) -> Int {
        do {
            return try VaultCollection.synchronized(in: vault).itemIDs().count
        } catch {
            throw storeError(error)
        }
    }

    /// Deletes the items named by `sources` (`collection/id`, as ``read(from:)`` gives them)
    /// from `vault` in one write, their index rows and pair lists with them.
    package static func delete(_ sources: [String], from vault: any Store) throws(StoreError) {
        var operations: [WriteOperation] = []
        var byCollection: [String: [String]] = [:]
        for source in sources {
            let parts = source.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            byCollection[parts[0], default: []].append(parts[1])
        }
        for (name, ids) in byCollection.sorted(by: { $0.key < $1.key }) {
            let collection = VaultCollection(name: name, label: "", store: vault)
            var pairs: [(String, String, String)] = []
            for id in ids {
                let record: SecretItemRecord
                do { record = try collection.record(id) } catch { throw storeError(error) }
                operations.append(.delete(Query(.genericPassword, attributes: collection.named(VaultCollection.secretGroup, name, id))))
                operations.append(.delete(Query(.genericPassword, attributes: collection.named(VaultCollection.itemGroup, name, id))))
                for (key, value) in record.attributes {
                    operations.append(.delete(Query(.genericPassword, attributes: collection.pairRow(id, key, value).attributes)))
                    pairs.append((id, key, value))
                }
            }
            operations += collection.tally.changes(adding: [], removing: pairs)
        }
        guard !operations.isEmpty else { return }
        try vault.write(operations)
    }
}
