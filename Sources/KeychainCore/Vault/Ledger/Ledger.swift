/// The item ledger as this connection last verified it: the ledger's state, the file's
/// `data_version` it was verified at (while no other connection commits, what was verified
/// stays true without a new scan), and the lookups through the scope index confirmed at that
/// version (``VaultState/confirmScopeIndex(returned:values:byProtection:counted:)``).
struct Ledger {
    /// The ledger as last verified (from format 2 on); nil before it is read or once forgotten.
    var state: LedgerState?
    /// The `data_version` at which it was verified; -1 when it never was, or was forgotten.
    private(set) var dataVersion: Int64 = -1
    private var confirmedLookups: Set<[UInt8]> = []
    private var lookupsVersion: Int64 = -1

    /// Whether what was verified still stands at `version` for a vault of `format` (format 1
    /// has no ledger to hold).
    func holds(at version: Int64, format: UInt16) -> Bool {
        version == dataVersion && (state != nil || format < 2)
    }

    /// Whether the ledger was verified before: then a new `data_version` means another
    /// connection committed, and what open checked is checked again.
    var wasVerified: Bool { dataVersion != -1 }

    /// Records that the ledger (``state``, as now set) was verified at `version`.
    mutating func verified(at version: Int64) {
        dataVersion = version
    }

    /// Forgets what was verified: the next read or write checks the file afresh.
    mutating func forget() {
        state = nil
        dataVersion = -1
    }

    /// Whether the scope-index lookup `key` was confirmed at the current `data_version`.
    func confirmed(lookup key: [UInt8]) -> Bool {
        lookupsVersion == dataVersion && confirmedLookups.contains(key)
    }

    /// Records that the scope-index lookup `key` matched the table at the current `data_version`.
    mutating func confirm(lookup key: [UInt8]) {
        if lookupsVersion != dataVersion {
            confirmedLookups = []
            lookupsVersion = dataVersion
        }
        confirmedLookups.insert(key)
    }
}
