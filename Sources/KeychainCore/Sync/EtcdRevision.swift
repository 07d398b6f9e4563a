/// etcd's revisions as untrusted input. A revision comes from a server that may lie: it is
/// believed only inside a range no honest cluster leaves, and every sum with a local number
/// saturates instead of trapping, so one hostile answer can fail a round but never stop sync
/// for good.
enum EtcdRevision {
    /// The largest revision believed: a cluster taking a million writes a second reaches it
    /// after about nine years, and one far below `Int64.max` leaves room for every sum below.
    static let ceiling: Int64 = 1 << 48
    /// How far ahead of the last revision a device saw a cluster's revision may be: more
    /// writes than a group makes between two rounds of any of its devices, by far.
    static let maximumJump: Int64 = 1 << 32

    /// The revision written as `text` in an answer (proto3 JSON renders int64 as a string; an
    /// omitted field is zero), or nil when it is not one a cluster gives.
    static func parse(_ text: String?) -> Int64? {
        guard let text else { return 0 }
        guard let value = Int64(text), (0...ceiling).contains(value) else { return nil }
        return value
    }

    /// The revision after `revision`, for a read or watch that starts past it.
    static func after(_ revision: Int64) -> Int64 { min(max(revision, 0), ceiling) + 1 }

    /// Refuses `revision` when it is further ahead of `seen` (the last revision this device
    /// applied; 0 when it has applied none) than any honest cluster moves between two rounds.
    static func check(_ revision: Int64, after seen: Int64) throws(SyncError) {
        guard (0...ceiling).contains(revision) else { throw .malformed("a revision out of range") }
        guard seen <= 0 || revision <= seen || revision - seen <= maximumJump else {
            throw .malformed("a revision \(revision - seen) ahead of the last one seen, more than a cluster moves between two rounds")
        }
    }

    /// `count` added to `total` without overflowing: a tally stops at its largest value.
    static func tally(_ total: UInt32, adding count: Int) -> UInt32 {
        let (sum, overflow) = total.addingReportingOverflow(UInt32(clamping: count))
        return overflow ? .max : sum
    }
}
