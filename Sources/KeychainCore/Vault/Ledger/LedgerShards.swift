/// How a format-3 vault splits its item ledger, so that a read checks only the rows it could
/// return: 1,024 item shards, each the rows whose identity digest sorts into one range of the
/// identity index (its first ten bits), and one shard for the sync journal. A point read checks
/// its own shard (about n/1,024 rows), and a write of named items the shards it changes; a
/// listing or a write by scope or class checks them all, as format 2 did.
///
/// Shards are kept in groups of 16: a group's `meta` record holds its shards' tallies
/// (``LedgerTally``), tagged with the group's number and the generation that last wrote it;
/// the ``LedgerRoot`` holds every group's generation under one tag. An older group record no
/// longer verifies against the root, and the root itself is caught rolled back by the
/// generation this boot has seen. A write rewrites the records of the groups it changed and
/// the root: two small records, each in one page, for a one-item write.
///
/// Format 4 adds 1,024 scope shards (``scopeShardBase`` on, in groups 65 to 128; group 64
/// then spans 16 shards, the journal's and 15 that stay empty): every item row also counts,
/// by an element that binds its scope digest too (``ItemLedger/scopeElement(_:scope:key:vaultID:)``),
/// in the scope shard its scope digest's first ten bits name. A read by scope then checks the
/// one scope shard its digest falls in, through the scope index, instead of every row of the
/// vault: a row deleted, put back from an older copy, or moved into or out of the scope
/// changes that shard's tally.
enum LedgerShards {
    static let itemShards = 1_024
    /// The sync journal's shard: after the item shards, in a group of its own.
    static let journalShard = itemShards
    static let count = itemShards + 1
    static let groupSize = 16
    static let groupCount = (count + groupSize - 1) / groupSize

    /// Format 4's first scope shard: the first of group 65.
    static let scopeShardBase = 1_040
    static let scopeShards = 1_024
    /// Format 4's shards, in ``scopedGroupCount`` groups.
    static let scopedCount = scopeShardBase + scopeShards
    static let scopedGroupCount = scopedCount / groupSize

    /// The groups of a vault of `format` (3 on; format 2 has one tally, no groups).
    static func groupCount(format: UInt16) -> Int { format >= 4 ? scopedGroupCount : groupCount }

    /// The shards of a ledger of `groups` groups.
    static func count(groups: Int) -> Int { groups == groupCount ? count : scopedCount }

    static func group(of shard: Int) -> Int { shard / groupSize }

    /// The shards group `group` holds, of a ledger of `total` shards.
    static func shards(ofGroup group: Int, of total: Int = count) -> Range<Int> { (group * groupSize)..<min(total, (group + 1) * groupSize) }

    /// Format 4's scope shard of a scope digest: its first ten bits, as ``shard(of:)-([UInt8])``
    /// places an identity.
    static func scopeShard(of scope: [UInt8]) -> Int { scopeShardBase + shard(of: scope) }

    /// As ``scopeShard(of:)-([UInt8])``, of a scope digest where SQLite keeps it.
    static func scopeShard(of scope: UnsafeRawBufferPointer) -> Int { scopeShardBase + shard(of: scope) }

    /// The item shard whose range of the identity index holds `identity`, by SQLite's order of
    /// blobs (bytes compared, then length): a digest's first ten bits; a blob shorter than two
    /// bytes (never written by the vault, but a hostile row may hold one) falls where SQLite
    /// sorts it, so that a range scan and a full scan put every row in the same shard.
    static func shard(of identity: [UInt8]) -> Int {
        identity.withUnsafeBytes { shard(of: $0) }
    }

    /// As ``shard(of:)-([UInt8])``, of an identity where SQLite keeps it.
    static func shard(of identity: UnsafeRawBufferPointer) -> Int {
        switch identity.count {
        case 0: return 0
        case 1: return max(0, (Int(identity[0]) << 2) - 1)
        default: return (Int(identity[0]) << 2) | (Int(identity[1]) >> 6)
        }
    }

    /// The smallest identity of item shard `shard`'s range (the first shard's range is open
    /// below, the last's above: every row of the table lies in exactly one).
    static func lowerBound(_ shard: Int) -> [UInt8] {
        [UInt8(shard >> 2), UInt8((shard & 3) << 6)]
    }

    /// The `meta` name of a group's record: `ledger/` and two digits (three from group 100 on).
    static func recordName(ofGroup group: Int) -> String {
        let written = Array(String(group).utf8)
        return String(decoding: recordPrefix + [UInt8](repeating: UInt8(ascii: "0"), count: max(0, 2 - written.count)) + written, as: UTF8.self)
    }

    /// The group a `meta` name holds the record of, among `groups`, or nil for any other name.
    static func group(ofRecordName name: [UInt8], groups: Int = groupCount) -> Int? {
        guard name.count == recordPrefix.count + 2 || name.count == recordPrefix.count + 3, name.starts(with: recordPrefix) else { return nil }
        var group = 0
        for byte in name[recordPrefix.count...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            group = group * 10 + Int(byte - UInt8(ascii: "0"))
        }
        // One name per group: three digits only from 100 on.
        guard group < groups, (name.count == recordPrefix.count + 3) == (group >= 100) else { return nil }
        return group
    }

    private static let recordPrefix = Array("ledger/".utf8)

    /// A group's stored record: each of its shards' count u64 and digest | tag over (group,
    /// generation, those tallies).
    static func encodedRecord(_ tallies: LedgerTallies, group: Int, generation: UInt64, key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(tallies.count * tallySize)
        for index in 0..<tallies.count {
            let tally = tallies[index]
            body.appendBigEndian(tally.count)
            body.append(contentsOf: tally.digest)
        }
        return TaggedRecord.seal(body, context: recordContext(group: group, generation: generation, vaultID: vaultID), key: key)
    }

    /// Its shards' tallies, or nil when the record is malformed or its tag does not verify for
    /// this group at `generation` (altered, another group's, or an older one of this group).
    static func decodeRecord(_ bytes: [UInt8], group: Int, generation: UInt64, key: HMACKey, vaultID: [UInt8], of total: Int = count) -> LedgerTallies? {
        let size = shards(ofGroup: group, of: total).count * tallySize
        let context = recordContext(group: group, generation: generation, vaultID: vaultID)
        guard let body = TaggedRecord.open(bytes, bodySize: size, context: context, key: key) else { return nil }
        var tallies = LedgerTallies(count: size / tallySize)
        for index in 0..<tallies.count {
            let offset = index * tallySize
            tallies[index] = LedgerTally(count: ItemLedger.integer(body, at: offset), digest: Array(body[(offset + 8)..<(offset + tallySize)]))
        }
        return tallies
    }

    private static let tallySize = 8 + Digest.size

    private static func recordContext(group: Int, generation: UInt64, vaultID: [UInt8]) -> [UInt8] {
        recordLabel + vaultID + [UInt8](bigEndian: UInt32(group)) + [UInt8](bigEndian: generation)
    }

    private static let recordLabel = Array("swift-keychain ledger group v3".utf8)
}

/// A format-3 vault's ledger root: the vault's generation (the last write's), the generation
/// that last wrote each group of shards (0: never written, so its shards are empty), and the
/// boot of the last write (``BootIdentity``; zeros when its writer claimed none), tagged with
/// the ledger key. Stored in `meta` as `ledger`, where format 2 keeps its ``ItemLedger``. The
/// groups' generations are kept as stored, big-endian bytes. A root written before the boot was
/// recorded still reads, as one that claims no boot.
struct LedgerRoot: Equatable {
    var generation: UInt64
    private var groups: [UInt8]
    /// The boot of the write that stored this root, or ``BootIdentity/none``.
    var writerBoot = BootIdentity.none

    static let empty = empty(groups: LedgerShards.groupCount)

    /// A root of `groups` groups (``LedgerShards/groupCount(format:)``), none written.
    static func empty(groups: Int) -> LedgerRoot { LedgerRoot(generation: 0, groups: [UInt8](repeating: 0, count: 8 * groups)) }

    private static func bodySize(groups: Int) -> Int { 8 + 8 * groups }
    static let encodedSize = encodedSize(groups: LedgerShards.groupCount)
    static func encodedSize(groups: Int) -> Int { bodySize(groups: groups) + BootIdentity.size + Digest.size }

    /// How many groups it names a generation for.
    var groupCount: Int { groups.count / 8 }

    /// The generation that last wrote `group`'s record (0: none).
    func generation(ofGroup group: Int) -> UInt64 { ItemLedger.integer(groups, at: 8 * group) }

    mutating func setGeneration(_ generation: UInt64, ofGroup group: Int) {
        groups.replaceSubrange((8 * group)..<(8 * group + 8), with: [UInt8](bigEndian: generation))
    }

    /// Every group back to generation 0 (a recount rewrites those that hold rows).
    mutating func resetGroups() { groups = [UInt8](repeating: 0, count: groups.count) }

    /// generation u64 | each group's generation u64 | writer's boot (16 bytes) | tag, big-endian.
    func encoded(key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        TaggedRecord.seal([UInt8](bigEndian: generation) + groups + writerBoot, context: Self.label + vaultID, key: key)
    }

    /// The root of `groups` groups a stored blob holds, or nil when it is malformed or its tag
    /// does not verify.
    static func decode(_ bytes: [UInt8], key: HMACKey, vaultID: [UInt8], groups: Int = LedgerShards.groupCount) -> LedgerRoot? {
        let bodySize = bodySize(groups: groups)
        if bytes.count == bodySize + Digest.size {
            guard let body = TaggedRecord.open(bytes, bodySize: bodySize, context: bootlessLabel + vaultID, key: key) else { return nil }
            return LedgerRoot(generation: ItemLedger.integer(body, at: 0), groups: Array(body[8...]))
        }
        guard let body = TaggedRecord.open(bytes, bodySize: encodedSize(groups: groups) - Digest.size, context: label + vaultID, key: key) else { return nil }
        return LedgerRoot(
            generation: ItemLedger.integer(body, at: 0), groups: Array(body[8..<bodySize]), writerBoot: Array(body[bodySize...]))
    }

    private static let bootlessLabel = Array("swift-keychain ledger root v3".utf8)
    private static let label = Array("swift-keychain ledger root v3 boot".utf8)
}
