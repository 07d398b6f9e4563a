import FoundationEssentials

/// The item table read: rows as stored, and the rows a query matches (checked as they are read).
extension VaultState {
    struct Row {
        var id: Int64
        var itemClass: ItemClass
        var accessibility: Accessibility
        var accessControl: AccessControl?
        var identity: [UInt8]
        var sealedAttributes: [UInt8]
        var value: [UInt8]?
        /// The generation that sealed the row; 0 for a row still sealed the format-1 way.
        var generation: UInt64
        /// The scope digest as stored (checked against the attributes wherever it selected the row).
        var scope: [UInt8]
        var attributes: Attributes?
    }

    /// The row under `s`; `scope`, when the statement selected rows by that scope digest, is
    /// taken for the row's own (the same bytes: copying each row's was 3% of a listing).
    func readRow(_ s: Statement, includeValue: Bool, scope: [UInt8]? = nil) throws(StoreError) -> Row {
        guard let itemClass = ItemClass(code: UInt8(truncatingIfNeeded: s.integer(1))),
            let (accessibility, accessControl) = RecordCoding.protection(code: UInt8(truncatingIfNeeded: s.integer(2)))
        else { throw .corrupted("an item has an unknown class or protection code") }
        return Row(
            id: s.integer(0), itemClass: itemClass, accessibility: accessibility, accessControl: accessControl, identity: s.blob(3),
            sealedAttributes: s.blob(4), value: includeValue ? s.blob(5) : nil, generation: UInt64(bitPattern: s.integer(6)), scope: scope ?? s.blob(7))
    }

    /// The row stored under `identity`, if any, once its ledger shard is checked.
    func row(identity: [UInt8], includeValue: Bool) throws(StoreError) -> Row? {
        try verifyLedgerShard(holding: identity)
        let statement = try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.selectByIdentity(format: Int(header.version))) }
        return try fetch(statement, [.blob(identity)], includeValue: includeValue, limit: 1).first
    }

    func sealedValue(of row: Row) throws(StoreError) -> [UInt8] {
        try sql { () throws(SQLiteError) -> [UInt8] in
            try connection.statement(VaultSchema.selectValue).with([.integer(row.id)]) { (s: Statement) throws(SQLiteError) -> [UInt8] in
                guard try s.step() else { throw SQLiteError.vanished("item vanished during the transaction") }
                return s.blob(0)
            }
        }
    }

    /// The rows a statement finds; a row that does not even decode (an unknown class or
    /// protection code) is passed over, and reported only when it was all there was.
    func fetch(_ statement: Statement, _ values: [Statement.Value], includeValue: Bool, limit: Int?) throws(StoreError) -> [Row] {
        var rows: [Row] = []
        try forEachRow(statement, values, includeValue: includeValue) { (row: inout Row) throws(StoreError) -> Bool in
            rows.append(row)
            return limit.map { rows.count < $0 } ?? true
        }
        return rows
    }

    /// Visits the rows a statement finds, in order, until `body` returns false; a row that does
    /// not even decode is passed over, and reported only when it was all there was. `scope` is
    /// the digest the statement selects by, if it does (see ``readRow(_:includeValue:scope:)``):
    /// then the rows must come in strictly increasing id order, as the scope index keeps them.
    ///
    /// - Returns: how many rows the statement returned, when `body` never stopped it; nil when it did.
    @discardableResult
    func forEachRow(
        _ statement: Statement, _ values: [Statement.Value], includeValue: Bool, scope: [UInt8]? = nil,
        _ body: (inout Row) throws(StoreError) -> Bool
    ) throws(StoreError) -> Int? {
        var failure: StoreError?
        var thrown: StoreError?
        var visited = false
        var returned = 0
        var lastID = Int64.min
        var stopped = false
        try sql { () throws(SQLiteError) in
            try statement.with(values) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    returned += 1
                    if scope != nil {
                        // Repeated or out of order: the index is not the one SQLite built.
                        let id = s.integer(0)
                        guard id > lastID else {
                            thrown = Self.scopeIndexDisagrees(location.path, "a row returned twice or out of order")
                            return
                        }
                        lastID = id
                    }
                    var row: Row
                    do throws(StoreError) {
                        row = try readRow(s, includeValue: includeValue, scope: scope)
                    } catch {
                        failure = failure ?? error
                        continue
                    }
                    visited = true
                    do throws(StoreError) {
                        guard try body(&row) else {
                            stopped = true
                            return
                        }
                    } catch {
                        thrown = error
                        return
                    }
                }
            }
        }
        if let thrown { throw thrown }
        if !visited, let failure { throw failure }
        return stopped ? nil : returned
    }

    /// The rows `query` matches, their attributes decrypted when `needAttributes` or the match
    /// needs them (see ``forEachMatchingRow(_:includeValue:needAttributes:fields:unavailable:_:)``);
    /// if nothing matched because a candidate could not be opened here, the reason is thrown.
    /// With `complete` (a write, which must reach every item it matches), the reason is thrown
    /// when any candidate could not be opened: a clear that left a locked or damaged item of
    /// its scope behind would report success for less than it was asked to do.
    func matchingRows(_ query: Query, includeValue: Bool, needAttributes: Bool, complete: Bool = false) throws(StoreError) -> [Row] {
        var unavailable: StoreError?
        var results: [Row] = []
        try forEachMatchingRow(query, includeValue: includeValue, needAttributes: needAttributes, fields: nil, unavailable: &unavailable) {
            (row: inout Row) throws(StoreError) in results.append(row)
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
        _ body: (inout Row) throws(StoreError) -> Void
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
                (row: inout Row) throws(StoreError) in
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
            let slot = VaultSchema.select(path, includeValue: includeValue, byProtection: wanted.accessibility != nil, format: Int(header.version))
            let statement = try sql { () throws(SQLiteError) in try connection.statement(slot) }
            var found = false
            let returned = try forEachRow(statement, values, includeValue: includeValue, scope: scopeDigest) { (row: inout Row) throws(StoreError) -> Bool in
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

    /// How many rows the item table holds (mutex held).
    func storedItemCount() throws(StoreError) -> Int {
        try sql { () throws(SQLiteError) -> Int in
            try connection.statement(VaultSchema.countItems).with([]) { (s: Statement) throws(SQLiteError) -> Int in
                _ = try s.step()
                return Int(s.integer(0))
            }
        }
    }
}
