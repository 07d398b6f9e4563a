/// A member list etcd served that this device refused, or that left it out: older than the
/// one it holds (rolled back), forked from it, or one of a new epoch without it (removed).
/// ``SyncStatus/alarm`` reports the last one; a forked history or a removal is also said on
/// the standard error of every `keychain` command, since nothing written then travels.
public struct SyncMembershipAlarm: Sendable, Equatable {
    /// What was wrong with the list etcd served.
    public enum Kind: UInt8, Sendable {
        /// An older epoch than this device holds, or its own epoch with members missing: the
        /// held list was written back.
        case rolledBack = 1
        /// A list of this device's epoch that lacks members it holds while listing others it
        /// never saw, or gives a member other keys: another device was shown a different
        /// version of the epoch's list. The held members were written back with the others.
        case forked = 2
        /// A list of a new epoch that leaves this device out: it was removed, and nothing it
        /// writes travels any more.
        case removed = 3
        /// Two histories of the group: a list of this device's epoch that does not open with
        /// its key, or a new epoch that does not extend its list (not signed by one of its
        /// members, naming others, or written where another list of that epoch had been).
        /// This device sends nothing until a person resolves it (``SyncEngine/resolveFork(excluding:)``
        /// on the device whose history is trusted; the others join again).
        case forkedHistory = 4
    }

    /// What happened.
    public var kind: Kind
    /// When it was seen, in milliseconds since 1970.
    public var at: UInt64
    /// The epoch of the list etcd served.
    public var servedEpoch: UInt32
    /// The epoch of the list this device holds.
    public var heldEpoch: UInt32
    /// How many refused lists since enrollment.
    public var count: UInt32

    /// `kind (1; 0: no alarm) || at (8) || served (4) || held (4) || count (4)`.
    func encoded() -> [UInt8] {
        [kind.rawValue] + [UInt8](bigEndian: at) + [UInt8](bigEndian: servedEpoch) + [UInt8](bigEndian: heldEpoch) + [UInt8](bigEndian: count)
    }

    /// The alarm `reader` is at: `.some(nil)` for none, nil when malformed.
    static func decode(_ reader: inout ByteReader) -> SyncMembershipAlarm?? {
        guard let code = reader.u8() else { return nil }
        if code == 0 { return .some(nil) }
        guard let kind = Kind(rawValue: code), let at = reader.take(8), let served = reader.u32(), let held = reader.u32(), let count = reader.u32() else {
            return nil
        }
        return SyncMembershipAlarm(kind: kind, at: at.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, servedEpoch: served, heldEpoch: held, count: count)
    }
}
