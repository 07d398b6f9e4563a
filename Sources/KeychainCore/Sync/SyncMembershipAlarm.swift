/// A member list etcd served that this device refused: older than the one it holds (rolled
/// back), or one that cannot follow from it (forked: devices shown different histories). The
/// device keeps its own list and writes it back; ``SyncStatus/alarm`` reports the last one.
public struct SyncMembershipAlarm: Sendable, Equatable {
    /// What was wrong with the list etcd served.
    public enum Kind: UInt8, Sendable {
        /// An older epoch than this device holds, or its own epoch with members missing.
        case rolledBack = 1
        /// A list of this device's epoch that does not open with its key, that gives a member
        /// other keys, or that lacks members this device holds while listing others it never
        /// saw: another device was shown a different history.
        case forked = 2
    }

    /// Whether the list was rolled back or forked.
    public var kind: Kind
    /// When it was seen, in milliseconds since 1970.
    public var at: UInt64
    /// The epoch of the list etcd served.
    public var servedEpoch: UInt32
    /// The epoch of the list this device holds (and wrote back).
    public var heldEpoch: UInt32
    /// How many refused lists since enrollment.
    public var count: UInt32

    /// `kind (1; 0: no alarm) || at (8) || served (4) || held (4) || count (4)`.
    func encoded() -> [UInt8] {
        [kind.rawValue] + VaultHeader.be(at) + VaultHeader.be(servedEpoch) + VaultHeader.be(heldEpoch) + VaultHeader.be(count)
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
