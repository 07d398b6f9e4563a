#if canImport(Glibc)
    import Glibc
#endif

/// The tallies of consecutive ledger shards (a vault's 1,025, or a group's 16), kept in one
/// byte array, 40 bytes a shard: its count (8 bytes, native order) then its digest. One array of
/// bytes, because every other array type a command makes is instantiated by the runtime in
/// that process (tens of thousands of instructions each, for every `keychain get`), and bytes
/// compare with `memcmp`.
struct LedgerTallies {
    private var bytes: [UInt8]
    private static let stride = 8 + Digest.size

    /// `count` empty tallies.
    init(count: Int) {
        bytes = [UInt8](repeating: 0, count: count * Self.stride)
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    var count: Int { bytes.count / Self.stride }

    subscript(index: Int) -> LedgerTally {
        get {
            let base = index * Self.stride
            let count = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: base, as: UInt64.self) }
            return LedgerTally(count: count, digest: Array(bytes[(base + 8)..<(base + Self.stride)]))
        }
        set {
            let base = index * Self.stride
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: newValue.count, toByteOffset: base, as: UInt64.self) }
            bytes.replaceSubrange((base + 8)..<(base + Self.stride), with: newValue.digest)
        }
    }

    /// Whether shard `index` vouches for no row.
    func isEmpty(_ index: Int) -> Bool {
        bytes[(index * Self.stride)..<((index + 1) * Self.stride)].allSatisfy { $0 == 0 }
    }

    /// Whether shard `index` here and shard `otherIndex` of `other` are the same tally.
    func matches(_ index: Int, _ other: LedgerTallies, _ otherIndex: Int) -> Bool {
        bytes.withUnsafeBytes { mine in
            other.bytes.withUnsafeBytes { theirs in
                memcmp(mine.baseAddress! + index * Self.stride, theirs.baseAddress! + otherIndex * Self.stride, Self.stride) == 0
            }
        }
    }

    /// XORs a row's element into shard `index`'s tally (`inserted`) or out of it.
    mutating func count(_ element: [UInt8], at index: Int, inserted: Bool) {
        let base = index * Self.stride
        bytes.withUnsafeMutableBytes { raw in
            let count = raw.loadUnaligned(fromByteOffset: base, as: UInt64.self)
            raw.storeBytes(of: inserted ? count &+ 1 : count &- 1, toByteOffset: base, as: UInt64.self)
        }
        for offset in 0..<Digest.size { bytes[base + 8 + offset] ^= element[offset] }
    }

    /// Puts `tallies` in place of the tallies of the shards from `first` on (a group's, read from its record).
    mutating func replace(from first: Int, with tallies: LedgerTallies) {
        bytes.replaceSubrange((first * Self.stride)..<((first + tallies.count) * Self.stride), with: tallies.bytes)
    }

    /// The tallies of `range`'s shards (a group's, out of the vault's, to write or compare its record).
    func slice(_ range: Range<Int>) -> LedgerTallies {
        LedgerTallies(bytes: Array(bytes[(range.lowerBound * Self.stride)..<(range.upperBound * Self.stride)]))
    }
}

extension LedgerTallies: Equatable {
    static func == (lhs: LedgerTallies, rhs: LedgerTallies) -> Bool {
        lhs.bytes.count == rhs.bytes.count
            && lhs.bytes.withUnsafeBytes { l in rhs.bytes.withUnsafeBytes { r in l.count == 0 || memcmp(l.baseAddress!, r.baseAddress!, l.count) == 0 } }
    }
}
