import Dispatch
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The store operations over an open vault: finding, testing and writing items, each under
/// the vault's lock. ``Vault`` validates queries and operations before they reach here.
extension OpenVault {
    func isAvailable(_ accessibility: Accessibility) -> Bool {
        mutex.withLock {
            touch()
            try? loadImplicitKeys()
            return classAvailable(accessibility)
        }
    }

    /// Finds items; with `returnData`, values behind an ``AccessControl`` are decrypted only
    /// after the query's ``AuthenticationContext`` (or the default authenticator) gives the
    /// proof, asked for once per call, outside the vault's lock.
    ///
    /// - Throws: ``StoreError/userCancelled``, ``StoreError/authenticationFailed`` or
    ///   ``StoreError/interactionNotAllowed`` for such values, besides the usual errors.
    func copyMatching(_ query: Query) throws(StoreError) -> [Item] {
        var proof: SecretBytes?
        while true {
            var needed: AccessControl?
            do throws(StoreError) {
                return try withState { () throws(StoreError) -> [Item] in
                    presenceKey = proof ?? query.authentication?.key(for: header.vaultID)
                    presenceNeeded = nil
                    defer { presenceKey = nil }
                    do throws(StoreError) {
                        return try checkedRead { () throws(StoreError) in try copyMatchingLocked(query) }
                    } catch .interactionNotAllowed {
                        needed = presenceNeeded
                        throw .interactionNotAllowed
                    }
                }
            } catch .interactionNotAllowed {
                guard proof == nil, let needed else { throw .interactionNotAllowed }
                proof = try presenceProof(for: needed, context: query.authentication ?? AuthenticationContext())
            }
        }
    }

    func copyMatchingLocked(_ query: Query) throws(StoreError) -> [Item] {
        var items: [Item] = []
        var unavailable: StoreError?
        var damaged: StoreError?
        try forEachMatchingRow(
            query, includeValue: query.returnData, needAttributes: query.returnAttributes, fields: query.returnedFields, unavailable: &unavailable
        ) { (row: inout Row) throws(StoreError) in
            // Built in the array, the row's attributes moved in: a listing builds thousands,
            // and each copy of an item (a few hundred bytes) retains every field it holds.
            items.append(Item(row.itemClass, attributes: row.attributes.take() ?? Self.named(query, row.accessibility)))
            if query.returnData, let sealed = row.value {
                do throws(StoreError) {
                    items[items.count - 1].value = try open(sealed, row: row, part: .value)
                } catch {
                    items.removeLast()
                    // One damaged item never hides the others; alone, it is reported.
                    guard error.isDamage else { throw error }
                    damaged = damaged ?? error
                }
            }
        }
        if items.isEmpty { throw damaged ?? unavailable ?? .itemNotFound }
        return items
    }

    /// An item's attributes where its own were not decrypted: those the query named.
    private static func named(_ query: Query, _ accessibility: Accessibility) -> Attributes {
        var named = query.attributes
        named.accessibility = accessibility
        return named
    }

    /// Whether an item matches, without decrypting any value (and any attribute the digests cover).
    func contains(_ query: Query) throws(StoreError) -> Bool {
        try withState { () throws(StoreError) -> Bool in
            var one = query
            one.limit = .one
            return try checkedRead { () throws(StoreError) in try !matchingRows(one, includeValue: false, needAttributes: false).isEmpty }
        }
    }

    /// Before any write (mutex held): keys another process rotated since this one took them
    /// must not seal anything, and a format-1 vault is upgraded first.
    func prepareWrite() throws(StoreError) {
        if try dropKeysIfRotated() { throw .locked }
        try upgradeBeforeWrite()
    }

    @discardableResult
    func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteResult {
        try withState { () throws(StoreError) -> WriteResult in
            try prepareWrite()
            return try ledgerWrite { () throws(StoreError) -> WriteResult in
                var counts: [Int] = []
                for operation in operations {
                    counts.append(try apply(operation))
                }
                return WriteResult(counts: counts)
            }
        }
    }
}
