/// Reads by scope digest go through the `items_scope` index, which the ledger does not cover:
/// its check scans the table. Someone who can write the file can rebuild that index without
/// some rows, with other rows' digests, or with rows swapped between scopes, and put the
/// schema's text back, so that SQLite's quick check and the schema check both pass. A listing
/// or a clear by scope would then see fewer rows, or other rows, and report success.
///
/// So a read through the index is held to the table: the rows it returns come in strictly
/// increasing id order (the order the index keeps them in), each lies in the scope by its
/// authenticated attributes (``ScopeCheck``, fatal on this path), and when the read ran to its
/// end their number is the number of table rows under that digest, counted without the index.
/// Together they mean the index returned exactly those rows. The count comes from the ledger's
/// pass over the table when the read makes one (``ScopeCount``), else from a count of its own,
/// and a lookup confirmed stays so until another connection commits: only a commit changes the
/// index, and this connection's own writes keep it consistent. A lookup the read's own pass did
/// not count may be confirmed by the counts of the last pass over the whole table
/// (``ScopeCensus``), while nothing was written since; else it is counted.
extension VaultState {
    /// Refuses a read through the scope index that returned `returned` rows for `values`
    /// (scope digest, class, and protection code when `byProtection`) when the table holds
    /// another number of rows under them: `counted`, when the ledger's pass in this read
    /// counted them, else counted here.
    func confirmScopeIndex(returned: Int, values: [Statement.Value], byProtection: Bool, counted: ScopeCount?) throws(StoreError) {
        let key = Self.scopeLookupKey(values)
        if ledger.confirmed(lookup: key) { return }
        let slot = byProtection ? VaultSchema.countScopeByProtection : VaultSchema.countScope
        let stored: Int64
        if let rows = counted?.rows {
            stored = rows
        } else if !byProtection, let census = ledger.census(changes: connection.totalChanges()), census.rows(under: values) == Int64(returned) {
            // The pass over the table this connection made since the last write counted as many.
            stored = Int64(returned)
        } else {
            stored = try sql { () throws(SQLiteError) -> Int64 in
                try connection.statement(slot).with(values) { (s: Statement) throws(SQLiteError) -> Int64 in try s.step() ? s.integer(0) : -1 }
            }
        }
        guard stored == Int64(returned) else {
            throw ItemTable.scopeIndexDisagrees(location.path, "it returned \(returned) row(s) for a scope the table holds \(stored) of")
        }
        ledger.confirm(lookup: key)
    }

    /// What a lookup through the scope index is remembered by once confirmed: the values it binds.
    static func scopeLookupKey(_ values: [Statement.Value]) -> [UInt8] {
        var key: [UInt8] = []
        for value in values {
            switch value {
            case .blob(let bytes): key += bytes
            case .integer(let number): key += withUnsafeBytes(of: number.littleEndian, Array.init)
            default: break
            }
        }
        return key
    }

    /// Whether a lookup through the scope index binding `values` was confirmed since the file
    /// last changed: its rows are vouched for as they were then, and this connection's own
    /// writes since kept the index and the ledger in step.
    func scopeLookupConfirmed(_ values: [Statement.Value]) -> Bool {
        ledger.confirmed(lookup: Self.scopeLookupKey(values))
    }
}
