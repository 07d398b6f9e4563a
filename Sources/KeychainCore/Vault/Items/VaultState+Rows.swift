import FoundationEssentials

/// The item table read: the rows a query matches, their ledger shards checked first, checked as they are read.
extension VaultState {
    /// The row stored under `identity`, if any, once its ledger shard is checked.
    func row(identity: [UInt8], includeValue: Bool) throws(StoreError) -> ItemRow? {
        try verifyLedgerShard(holding: identity)
        return try items.row(identity: identity, includeValue: includeValue)
    }

    /// The rows `query` matches, their attributes decrypted when `needAttributes` or the match
    /// needs them (see ``forEachMatchingRow(_:includeValue:needAttributes:fields:unavailable:_:)``);
    /// if nothing matched because a candidate could not be opened here, the reason is thrown.
    /// With `complete` (a write, which must reach every item it matches), the reason is thrown
    /// when any candidate could not be opened: a clear that left a locked or damaged item of
    /// its scope behind would report success for less than it was asked to do.
    func matchingRows(_ query: Query, includeValue: Bool, needAttributes: Bool, complete: Bool = false) throws(StoreError) -> [ItemRow] {
        var unavailable: StoreError?
        var results: [ItemRow] = []
        try forEachMatchingRow(query, includeValue: includeValue, needAttributes: needAttributes, fields: nil, unavailable: &unavailable) {
            (row: inout ItemRow) throws(StoreError) in results.append(row)
        }
        if results.isEmpty || complete, let unavailable { throw unavailable }
        return results
    }

    /// Visits each row matching `query`, checked and, when `needAttributes` or the match needs
    /// them, with its attributes decrypted. Digests narrow the candidates (identity, then scope,
    /// then class); attributes are decrypted only when the query names one the digests do not
    /// cover, or when `needAttributes`; values are read only when `includeValue`. `fields`
    /// decodes only those attributes (and what the match checks): reads pass their query's
    /// ``Query/returnedFields``; writes, which keep what they decode, never do.
    ///
    /// Each row is checked and handed on as it is read: a listing kept no array of every row
    /// beside its results (at 100,000 items, tens of megabytes of fresh pages on every call).
    /// Before a lookup, the ledger shards it may meet are checked (``verifyLedgerShard(holding:)``),
    /// so that a read inside ``checkedRead(_:_:)`` with `.rowsAsRead` still meets only vouched rows.
    ///
    /// A candidate whose class key is not available here (locked, or bound to another machine)
    /// is passed over, as the Keychain passes over what it cannot decrypt, and the reason kept
    /// in `unavailable`, so a locked item is never reported as missing.
    func forEachMatchingRow(
        _ query: Query, includeValue: Bool, needAttributes: Bool, fields: AttributeField.Mask?, unavailable: inout StoreError?,
        _ body: (inout ItemRow) throws(StoreError) -> Void
    ) throws(StoreError) {
        let wanted = query.attributes
        let present = AttributeField.Mask(present: wanted)
        // One item asked for by its name (service or server, and account) but not by its whole
        // identity: the item of that name whose other identity fields (access group,
        // synchronizable...) are at their defaults, where `keychain set --service` and programs
        // without access groups keep it, is a match, found by its identity digest in one ledger
        // shard. Only without one are the class's rows searched, and every shard checked.
        if query.limit == .one, let itemClass = query.itemClass, let named = Self.namedByDefaults(query, itemClass, present) {
            var found = false
            try forEachMatchingRow(named, includeValue: includeValue, needAttributes: needAttributes, fields: fields, unavailable: &unavailable) {
                (row: inout ItemRow) throws(StoreError) in
                found = true
                try body(&row)
            }
            if found { return }
        }
        var scratch: RowScratch?
        for itemClass in query.itemClass.map({ [$0] }) ?? ItemClass.allCases {
            let path: VaultSchema.Lookup
            var scopeDigest: [UInt8]?
            var values: [Statement.Value] = []
            values.reserveCapacity(3)
            var covered = AttributeField.Mask([.accessibility, .accessControl]).bits | AttributeField.dates.bits
            // Only rows the ledger vouches for are read: the shard an identity digest falls in
            // is checked, the scope shard (format 4) or every shard for a lookup by scope, or
            // every shard for a lookup by class.
            if present.contains(all: RecordCoding.identityMask(itemClass)) {
                path = .identity
                let identity = try identityDigest(itemClass, wanted)
                try verifyLedgerShard(holding: identity)
                values.append(.blob(identity))
                covered |= RecordCoding.identityMask(itemClass).bits
            } else if present.contains(all: RecordCoding.scopeMask(itemClass)) {
                path = .scope
                scopeDigest = try lookupKey().authenticationCode(RecordCoding.scopeMessage(itemClass, wanted))
                values.append(.blob(scopeDigest!))
                covered |= RecordCoding.scopeMask(itemClass).bits
            } else {
                path = .itemClass
                try verifyLedgerShard(holding: nil)
            }
            values.append(.integer(Int64(itemClass.code)))
            if let accessibility = wanted.accessibility { values.append(.integer(Int64(accessibility.code))) }
            var scopeCount: ScopeCount?
            if path == .scope {
                scopeCount = ScopeCount(values)
                // Format 4 checks the one scope shard the digest falls in (once per lookup while
                // the file is unchanged); earlier formats every shard.
                if ledger.state?.isScoped == true {
                    if !scopeLookupConfirmed(values) { try verifyScopeShard(scopeDigest!, counting: &scopeCount) }
                } else {
                    try verifyLedgerShard(holding: nil, counting: &scopeCount)
                }
            }
            // The digests already matched the covered fields; only the others need the decrypted attributes.
            let uncoveredMask = present.subtracting(AttributeField.Mask(bits: covered))
            let uncovered = uncoveredMask.isEmpty ? [] : uncoveredMask.fields
            // A row found by its scope digest is checked against its attributes (``ScopeCheck``):
            // a row moved into another scope must never be listed, changed or deleted as part of it.
            let decrypt = needAttributes || !uncovered.isEmpty || path == .scope
            let decoded = fields?.union(uncoveredMask)
            let scopeCheck = path == .scope ? ScopeCheck(itemClass, wanted) : nil
            let statement = try items.select(path, includeValue: includeValue, byProtection: wanted.accessibility != nil)
            var found = false
            let returned = try items.forEachRow(statement, values, includeValue: includeValue, scope: scopeDigest) { (row: inout ItemRow) throws(StoreError) -> Bool in
                if let wantedControl = wanted.accessControl, row.accessControl != wantedControl { return true }
                if decrypt {
                    let attributes: Attributes
                    do throws(StoreError) {
                        if scratch == nil { scratch = RowScratch() }
                        attributes = try decryptAttributes(row, scratch: scratch, fields: decoded, scope: scopeCheck)
                    } catch {
                        // Passed over: what this process cannot open, and what is damaged
                        // (one damaged row never stops reads of the others). A row the scope
                        // index returned outside its scope is not damage but a lying index
                        // or a moved row: passing it over would hide the row it stands for.
                        guard error.isUnavailableKey || error.isDamage, error != ScopeCheck.outOfScope else { throw error }
                        unavailable = unavailable ?? error
                        return true
                    }
                    if !uncovered.isEmpty {
                        let normalized = attributes.normalizedIdentity(for: itemClass)
                        guard uncovered.allSatisfy({ $0.equal(normalized, wanted) }) else { return true }
                    }
                    row.attributes = attributes
                }
                try body(&row)
                found = true
                return query.limit != .one
            }
            // Every row the index returned was in scope and in order; all of them, if the table agrees.
            if path == .scope, let returned {
                try confirmScopeIndex(returned: returned, values: values, byProtection: wanted.accessibility != nil, counted: scopeCount)
            }
            if query.limit == .one, found { return }
        }
    }

    /// `query` with the identity fields it leaves out at their defaults, when it names an item's
    /// scope field (service or server) and account but not its whole identity; nil otherwise.
    private static func namedByDefaults(_ query: Query, _ itemClass: ItemClass, _ present: AttributeField.Mask) -> Query? {
        guard !present.contains(all: RecordCoding.identityMask(itemClass)), query.attributes.account != nil,
            (itemClass == .genericPassword ? query.attributes.service : query.attributes.server) != nil
        else { return nil }
        var named = query
        named.attributes = query.attributes.normalizedIdentity(for: itemClass)
        return named
    }
}
