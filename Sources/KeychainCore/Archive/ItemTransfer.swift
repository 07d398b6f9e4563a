/// Moving items between stores and archives: what may be read out of a store, and how items
/// are merged into one, in one transaction of the destination.
package enum ItemTransfer {
    /// What to do with an item whose identity the destination already holds.
    package enum ConflictRule: String, Sendable, CaseIterable {
        /// Keep the destination's item; skip the incoming one.
        case keep
        /// Replace the destination's item with the incoming one.
        case replace
        /// Change nothing at all: the whole import fails with ``StoreError/duplicateItem``.
        case refuse
    }

    /// What a merge did.
    package struct Outcome: Sendable, Equatable {
        /// Items that were not there and were added.
        package var added = 0
        /// Items that were there and were replaced (`--conflict replace`).
        package var replaced = 0
        /// Items that were there and were kept as they were (`--conflict keep`).
        package var kept = 0
    }

    /// Every item of `store` that may leave it (with its value), and what stays behind:
    /// ThisDeviceOnly and access-controlled items are listed without reading their values
    /// (which would ask for a proof) and left out.
    ///
    /// Items of a class locked here cannot be read: a transfer without them is partial, so it
    /// fails unless `skipLocked`, and then they are counted in ``ItemArchive/Leftovers/locked``.
    ///
    /// - Throws: ``StoreError/locked`` when an item that would leave is in a locked class and
    ///   `skipLocked` is false.
    package static func transferableItems(of store: any Store, skipLocked: Bool = false) throws(StoreError) -> (
        items: [Item], leftovers: ItemArchive.Leftovers
    ) {
        var leftovers = ItemArchive.Leftovers()
        leftovers.locked = try lockedItemCount(of: store)
        if leftovers.locked > 0 && !skipLocked { throw .locked }
        let listed: [Item]
        do { listed = try store.copyMatching(Query()) } catch .itemNotFound { return ([], leftovers) }
        var items: [Item] = []
        for item in listed {
            guard item.attributes.mayLeave(by: .export) else {
                if item.attributes.accessControl != nil { leftovers.accessControlled += 1 } else { leftovers.thisDeviceOnly += 1 }
                continue
            }
            var query = Query(identifying: item)
            query.limit = .one
            query.returnData = true
            guard var found = try store.copyMatching(query).first else { continue }
            found.attributes = found.attributes.leaving(by: .export)
            items.append(found)
        }
        return (items, leftovers)
    }

    /// How many items that could leave `store` (not ThisDeviceOnly) are in a class locked here,
    /// so that a transfer would leave them behind. A vault counts them by their stored
    /// protection alone, which needs no key.
    package static func lockedItemCount(of store: any Store) throws(StoreError) -> Int {
        var count = 0
        for accessibility in Accessibility.allCases where !accessibility.isThisDeviceOnly && !store.isAvailable(accessibility) {
            do {
                count += try store.copyMatching(Query(attributes: Attributes(accessibility: accessibility), returnAttributes: false)).count
            } catch .itemNotFound {}
        }
        return count
    }

    /// Writes `items` into `store` under `rule`, in one write (one transaction of a vault).
    /// - Throws: ``StoreError/duplicateItem`` under ``ConflictRule/refuse`` when an identity
    ///   is taken (nothing is written), and the store's errors (nothing is written).
    @discardableResult
    package static func merge(_ items: [Item], into store: any Store, rule: ConflictRule) throws(StoreError) -> Outcome {
        try plannedMerge(items, into: store, rule: rule).outcome
    }

    /// The merge, and which items it wrote (added, then replaced).
    private static func plannedMerge(_ items: [Item], into store: any Store, rule: ConflictRule) throws(StoreError)
        -> (outcome: Outcome, added: [Item], replaced: [Item])
    {
        var outcome = Outcome()
        var added: [Item] = [], replaced: [Item] = []
        for item in items {
            if try store.contains(Query(identifying: item)) {
                switch rule {
                case .keep: outcome.kept += 1
                case .replace: replaced.append(item)
                case .refuse: throw .duplicateItem
                }
            } else {
                added.append(item)
            }
        }
        outcome.added = added.count
        outcome.replaced = replaced.count
        let operations = added.map { WriteOperation.add($0) } + replaced.map { WriteOperation.upsert($0) }
        if !operations.isEmpty { try store.write(operations) }
        return (outcome, added, replaced)
    }

    /// Moves the transferable items of `source` into `destination` under `rule`: the
    /// destination's write is all or nothing, and only the items it took (added or replaced;
    /// never those it kept its own of) are then deleted from the source. If that deletion
    /// fails, the added items are taken out again, so nothing is duplicated. With
    /// `keepSource`, a copy.
    ///
    /// - Throws: ``StoreError/locked``, before anything is written, when an item that would
    ///   move is in a class locked here, unless `skipLocked` (see ``transferableItems(of:skipLocked:)``).
    package static func move(
        from source: any Store, to destination: any Store, rule: ConflictRule,
        keepSource: Bool, skipLocked: Bool = false
    ) throws(StoreError) -> (Outcome, ItemArchive.Leftovers) {
        let (items, leftovers) = try transferableItems(of: source, skipLocked: skipLocked)
        let (outcome, added, replaced) = try plannedMerge(items, into: destination, rule: rule)
        let moved = added + replaced
        guard !keepSource, !moved.isEmpty else { return (outcome, leftovers) }
        do {
            try source.write(moved.map { .delete(Query(identifying: $0)) })
        } catch {
            _ = try? destination.write(added.map { .delete(Query(identifying: $0)) })
            if replaced.isEmpty {
                throw .partlyApplied("nothing moved: the items could not be removed from the source (\(error.description)), so the copies were taken out again")
            }
            throw .partlyApplied("\(replaced.count) item(s) replaced in the destination are still in the source too: removing them from the source failed (\(error.description))")
        }
        return (outcome, leftovers)
    }
}
