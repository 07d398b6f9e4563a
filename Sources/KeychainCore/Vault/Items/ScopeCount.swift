/// The table rows under one scope digest and class (and protection code), counted as the
/// ledger's pass over the table reads them: when a lookup by scope finds the ledger not yet
/// checked, the pass it needs anyway also gives the number the scope index must return
/// (``VaultState/confirmScopeIndex(returned:values:byProtection:counted:)``), without a second scan.
struct ScopeCount {
    private let digest: [UInt8]
    private let itemClass: Int64
    private let protection: Int64?
    /// The rows counted; nil until a pass over the table counted them.
    private(set) var rows: Int64?

    /// A count for the lookup that binds `values` (scope digest, class, and a protection code
    /// when the lookup filters by one), as ``VaultSchema/select(_:includeValue:byProtection:format:)`` does.
    init?(_ values: [Statement.Value]) {
        guard values.count >= 2, case .blob(let digest) = values[0], case .integer(let itemClass) = values[1] else { return nil }
        self.digest = digest
        self.itemClass = itemClass
        if values.count > 2, case .integer(let protection) = values[2] { self.protection = protection } else { protection = nil }
    }

    /// Records that a pass over every row that could be the lookup's ran (and may have met none).
    mutating func passed() {
        if rows == nil { rows = 0 }
    }

    /// Counts the row `s` is on, whose scope, class and protection are in those columns.
    mutating func count(_ s: Statement, scope: Int32, itemClass: Int32, protection: Int32) {
        if rows == nil { rows = 0 }
        guard s.integer(itemClass) == self.itemClass, self.protection.map({ s.integer(protection) & 15 == $0 }) ?? true,
            s.blobEquals(scope, digest)
        else { return }
        rows! += 1
    }
}
