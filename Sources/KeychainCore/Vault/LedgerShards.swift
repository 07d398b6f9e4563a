/// How a format-3 vault splits its item ledger, so that a read checks only the rows it could
/// return: 1,024 item shards, each the rows whose identity digest sorts into one range of the
/// identity index (its first ten bits), and one shard for the sync journal. A point read checks
/// its own shard (about n/1,024 rows); a listing or a write checks them all, as format 2 did.
///
/// Each shard's ``LedgerTally`` is stored in `meta` under its own name, tagged with the shard's
/// index and the generation that last wrote it; the ``LedgerRoot`` holds every shard's
/// generation under one tag, so an older record of one shard (with its older rows) no longer
/// verifies, and the root itself is caught rolled back by the generation this boot has seen.
enum LedgerShards {
    static let itemShards = 1_024
    /// The sync journal's shard: after the item shards.
    static let journalShard = itemShards
    static let count = itemShards + 1

    /// The item shard whose range of the identity index holds `identity`, by SQLite's order of
    /// blobs (bytes compared, then length): a digest's first ten bits; a blob shorter than two
    /// bytes (never written by the vault, but a hostile row may hold one) falls where SQLite
    /// sorts it, so that a range scan and a full scan put every row in the same shard.
    static func shard(of identity: [UInt8]) -> Int {
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

    /// The `meta` name of a shard's record: `ledger/` and four digits.
    static func recordName(_ shard: Int) -> String {
        let digits = Array(String(shard).utf8)
        return String(decoding: recordPrefix + [UInt8](repeating: UInt8(ascii: "0"), count: 4 - digits.count) + digits, as: UTF8.self)
    }

    /// The shard a `meta` name holds the record of, or nil for any other name.
    static func shard(ofRecordName name: [UInt8]) -> Int? {
        guard name.count == recordPrefix.count + 4, name.starts(with: recordPrefix) else { return nil }
        var shard = 0
        for byte in name[recordPrefix.count...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            shard = shard * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return shard < count ? shard : nil
    }

    static let recordPrefix = Array("ledger/".utf8)

    /// A shard's stored record: count u64 | digest | tag over (shard, generation, count, digest).
    static func encodedRecord(_ tally: LedgerTally, shard: Int, generation: UInt64, key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        let body = VaultHeader.be(tally.count) + tally.digest
        return body + key.authenticationCode(recordMessage(body, shard: shard, generation: generation, vaultID: vaultID))
    }

    /// The tally a stored record holds, or nil when it is malformed or its tag does not verify
    /// for this shard at `generation` (altered, another shard's, or an older one of this shard).
    static func decodeRecord(_ bytes: [UInt8], shard: Int, generation: UInt64, key: HMACKey, vaultID: [UInt8]) -> LedgerTally? {
        let size = 8 + Digest.size
        guard bytes.count == size + Digest.size else { return nil }
        let body = Array(bytes[0..<size])
        let tag = key.authenticationCode(recordMessage(body, shard: shard, generation: generation, vaultID: vaultID))
        guard Digest.equal(tag, Array(bytes[size...])) else { return nil }
        return LedgerTally(count: ItemLedger.integer(body, at: 0), digest: Array(body[8...]))
    }

    private static func recordMessage(_ body: [UInt8], shard: Int, generation: UInt64, vaultID: [UInt8]) -> [UInt8] {
        recordLabel + vaultID + VaultHeader.be(UInt32(shard)) + VaultHeader.be(generation) + body
    }

    private static let recordLabel = Array("swift-keychain ledger shard v3".utf8)
}

/// A format-3 vault's ledger root: the vault's generation (the last write's) and the
/// generation that last wrote each shard (0: never written, so empty), tagged with the ledger
/// key. Stored in `meta` as `ledger`, where format 2 keeps its ``ItemLedger``.
struct LedgerRoot: Equatable {
    var generation: UInt64
    var shardGenerations: [UInt64]

    static let empty = LedgerRoot(generation: 0, shardGenerations: [UInt64](repeating: 0, count: LedgerShards.count))
    static let encodedSize = 8 + 8 * LedgerShards.count + Digest.size

    /// generation u64 | each shard's generation u64 | tag, big-endian.
    func encoded(key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(Self.encodedSize)
        body.appendBigEndian(generation)
        for shardGeneration in shardGenerations { body.appendBigEndian(shardGeneration) }
        return body + key.authenticationCode(Self.label + vaultID + body)
    }

    /// The root a stored blob holds, or nil when it is malformed or its tag does not verify.
    static func decode(_ bytes: [UInt8], key: HMACKey, vaultID: [UInt8]) -> LedgerRoot? {
        guard bytes.count == encodedSize else { return nil }
        let body = Array(bytes[0..<(encodedSize - Digest.size)])
        guard Digest.equal(key.authenticationCode(label + vaultID + body), Array(bytes[(encodedSize - Digest.size)...])) else { return nil }
        return body.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            func u64() -> UInt64 { UInt64(reader.u32()!) << 32 | UInt64(reader.u32()!) }
            let generation = u64()
            return LedgerRoot(generation: generation, shardGenerations: (0..<LedgerShards.count).map { _ in u64() })
        }
    }

    private static let label = Array("swift-keychain ledger root v3".utf8)
}
