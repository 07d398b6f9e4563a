/// How many table rows lie under each scope digest and class, taken in the ledger's pass over
/// the whole table (which reads every row anyway), so that a later lookup by scope can confirm
/// the scope index (``VaultState/confirmScopeIndex(returned:values:byProtection:counted:)``)
/// without a count over the table of its own: a server's first answer reads several scopes
/// (collections, aliases, a search), and each such count read every row of the vault.
///
/// Rows are counted by a 64-bit key of their scope digest and class, so that the census stays
/// a few bytes per scope whatever the rows hold: two scopes may share a key, and then the
/// census says more rows than either holds. A census is only ever used to confirm a lookup that
/// returned exactly the number it says; a lookup that returned fewer is counted as before, and
/// the index reads (each row in the scope by its authenticated attributes, in strictly
/// increasing id order) never return more than the scope holds. So a shared key costs a count,
/// never a lookup confirmed that should not be.
///
/// It stands for the table as the pass found it: only while no connection has written since
/// (``Ledger`` keeps it with the `data_version` and this connection's change count it was
/// taken at).
struct ScopeCensus {
    private var rows: [UInt64: Int64] = [:]

    /// Counts the row `s` is on, whose scope digest and class are in those columns.
    mutating func count(_ s: Statement, scope: Int32, itemClass: Int32) {
        rows[Self.key(scope: s.blobKey(scope), itemClass: s.integer(itemClass)), default: 0] += 1
    }

    /// The rows counted under the lookup that binds `values` (scope digest and class, as
    /// ``VaultSchema/select(_:includeValue:byProtection:format:)`` does), or more (a shared key);
    /// nil for any other lookup.
    func rows(under values: [Statement.Value]) -> Int64? {
        guard values.count == 2, case .blob(let digest) = values[0], case .integer(let itemClass) = values[1] else { return nil }
        var scope: UInt64 = 0
        withUnsafeMutableBytes(of: &scope) { key in digest.withUnsafeBytes { key.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(8))) } }
        return rows[Self.key(scope: scope ^ UInt64(digest.count) &* 0x9E37_79B9_7F4A_7C15, itemClass: itemClass)] ?? 0
    }

    private static func key(scope: UInt64, itemClass: Int64) -> UInt64 {
        scope ^ (UInt64(bitPattern: itemClass) &* 0xC2B2_AE3D_27D4_EB4F)
    }
}
