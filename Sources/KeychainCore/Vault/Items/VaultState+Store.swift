import Dispatch
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The store operations over an open vault: finding, testing and writing items, each under
/// the vault's lock. ``Vault`` validates queries and operations before they reach here.
extension VaultState {
    /// Whether items of `accessibility` can be read and written now. A look, not a use of the
    /// user's unlocked state: a lock since this process unlocked, or the end of the user's
    /// unlocked state, counts; its timeout is not pushed back.
    func isAvailable(_ accessibility: Accessibility) -> Bool {
        followUserLock(asUse: false)
        touch()
        try? loadImplicitKeys()
        return classAvailable(accessibility)
    }

    /// What one attempt at ``VaultEngine/copyMatching(_:)`` found: the items, or the access
    /// control whose proof of presence it needs first (asked outside the vault's lock).
    enum MatchedItems: Sendable {
        case items([Item])
        case needsPresence(AccessControl)
    }

    /// Finds items, values behind an access control opened with `proof` (or the query's
    /// context's proof) when there is one.
    func copyMatching(_ query: Query, proof: SecretBytes?) throws(StoreError) -> MatchedItems {
        var context = ReadContext(presenceKey: proof ?? query.authentication?.key(for: header.vaultID))
        do {
            return .items(
                try afterRotation { () throws(StoreError) in
                    try checkedRead(.rowsAsRead) { () throws(StoreError) in try copyMatchingLocked(query, context: &context) }
                })
        } catch .interactionNotAllowed {
            guard proof == nil, let needed = context.presenceNeeded else { throw .interactionNotAllowed }
            return .needsPresence(needed)
        }
    }

    /// Hands each match to `body` as it is read (``Vault/forEachMatching(_:_:)``), for a
    /// query that returns no values.
    func forEachMatching(_ query: Query, _ body: (Item) throws(StoreError) -> Void) throws(StoreError) {
        precondition(!query.returnData, "values may need a proof of presence: list them with copyMatching")
        try afterRotation { () throws(StoreError) in
            try checkedRead(.rowsAsRead) { () throws(StoreError) in
                var context = ReadContext()
                try forEachItemLocked(query, context: &context) { (item: consuming Item) throws(StoreError) in try body(item) }
            }
        }
    }

    func copyMatchingLocked(_ query: Query, context: inout ReadContext) throws(StoreError) -> [Item] {
        var items: [Item] = []
        try forEachItemLocked(query, context: &context) { (item: consuming Item) throws(StoreError) in items.append(item) }
        return items
    }

    /// Each item matching `query`, built from its row, its value opened when the query asks.
    /// One damaged item never hides the others; alone, it is reported. Throws
    /// ``StoreError/itemNotFound`` (or why the candidates could not be opened) when none match.
    private func forEachItemLocked(_ query: Query, context: inout ReadContext, _ body: (consuming Item) throws(StoreError) -> Void) throws(StoreError) {
        var unavailable: StoreError?
        var damaged: StoreError?
        var found = false
        try forEachMatchingRow(
            query, includeValue: query.returnData, needAttributes: query.returnAttributes, fields: query.returnedFields, unavailable: &unavailable
        ) { (row: inout ItemRow) throws(StoreError) in
            if isCarriedOver(row) {
                damaged = damaged ?? carriedRowRefused
                return
            }
            var value: SecretBytes?
            if query.returnData, let sealed = row.value {
                do throws(StoreError) {
                    value = try open(sealed, row: row, part: .value, context: &context)
                } catch {
                    guard error.isDamage else { throw error }
                    damaged = damaged ?? error
                    return
                }
            }
            found = true
            // Built in the call, the row's attributes moved in rather than shared with the row
            // (a listing builds thousands: a shared storage would be retained and released once
            // more for each).
            try body(Item(row.itemClass, attributes: row.attributes.take() ?? Self.named(query, row.accessibility), value: value))
        }
        if !found { throw damaged ?? unavailable ?? .itemNotFound }
    }

    /// An item's attributes where its own were not decrypted: those the query named.
    private static func named(_ query: Query, _ accessibility: Accessibility) -> Attributes {
        var named = query.attributes
        named.accessibility = accessibility
        return named
    }

    /// Whether an item matches, without decrypting any value (and any attribute the digests cover).
    func contains(_ query: Query) throws(StoreError) -> Bool {
        var one = query
        one.limit = .one
        return try afterRotation { () throws(StoreError) in
            try checkedRead(.rowsAsRead) { () throws(StoreError) in try !matchingRows(one, includeValue: false, needAttributes: false).isEmpty }
        }
    }

    /// Before any write (mutex held): keys another process rotated since this one took them
    /// must not seal anything, and a format-1 vault is upgraded first.
    func prepareWrite() throws(StoreError) {
        if try dropKeysIfRotated() { throw .locked }
        try upgradeBeforeWrite()
    }

    /// Applies `operations` in one transaction.
    func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteOutcome {
        try afterRotation { () throws(StoreError) -> WriteOutcome in
            try prepareWrite()
            let (result, journaled) = try journaledWrite(operations.allSatisfy(Self.namesItsItems) ? .rowsAsRead : .everyRow) {
                (transaction) throws(StoreError) -> WriteResult in
                var counts: [Int] = []
                for operation in operations {
                    counts.append(try apply(operation, in: &transaction))
                }
                return WriteResult(counts: counts)
            }
            return WriteOutcome(result: result, journaled: journaled)
        }
    }

    /// Runs `body` (the vault's lock held); when it finds this process's keys retired by another
    /// process's rotation (``dropKeysIfRotated()``), waits for the new keys to be published
    /// and runs it once more: a rekey elsewhere delays a read or write, it does not fail it.
    func afterRotation<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        let held = lockState.keys.lookup != nil
        do {
            return try body()
        } catch .locked {
            guard held, lockState.keys.lookup == nil, try awaitRotatedKeys() else { throw .locked }
            return try body()
        }
    }

    /// Whether `operation` meets only the items it names by identity (an add or upsert, or an
    /// update or delete whose query names a class and its identity), so that the write need
    /// check only their ledger shards.
    private static func namesItsItems(_ operation: WriteOperation) -> Bool {
        switch operation {
        case .add, .upsert: true
        case .update(let query, _, _), .delete(let query):
            query.itemClass.map { AttributeField.Mask(present: query.attributes).contains(all: RecordCoding.identityMask($0)) } ?? false
        }
    }
}
