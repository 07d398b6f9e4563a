internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// How many rows a part of the item ledger vouches for, and the XOR of one keyed digest per
/// row over (row id, class, identity digest, row generation): each sealed row carries the
/// generation that wrote it (bound into its associated data), so the tally catches a deleted
/// row, a row restored from an older copy (its generation differs, and its sealed parts open
/// only with the generation they were sealed with), a restored deleted row, a changed row id or
/// identity. A write updates it in O(1): the digests of the rows it replaces or removes are
/// XORed out, those it writes XORed in. The digests are keyed and never stored, so the XOR
/// cannot be steered from the file.
/// Tallies are kept and counted in ``LedgerTallies``; this is one of them, taken out.
struct LedgerTally: Equatable {
    var count: UInt64
    var digest: [UInt8]
}

/// A format-2 vault's item ledger: one tally for the whole item table (and sync journal) and a
/// generation counter, tagged with the ledger key. Checking it is O(n), once per connection and
/// again whenever another connection changed the file (SQLite's `data_version`); format 3
/// splits it into shards under a ``LedgerRoot`` so that a read checks only its own.
///
/// The whole file rolled back to an older copy carries a consistent older ledger: that is
/// caught within a boot by the generation this boot last saw, kept in the kernel keyring
/// (``GenerationTable``).
struct ItemLedger: Equatable {
    var generation: UInt64
    var tally: LedgerTally

    static let encodedSize = 8 + 8 + Digest.size + Digest.size

    /// What one row contributes.
    struct Row {
        var id: Int64
        var itemClass: UInt8
        var identity: [UInt8]
        var generation: UInt64
    }

    static func element(_ row: Row, key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        var message = rowLabel
        message.reserveCapacity(rowLabel.count + vaultID.count + 17 + row.identity.count)
        message.append(contentsOf: vaultID)
        message.append(contentsOf: [UInt8](bigEndian: UInt64(bitPattern: row.id)))
        message.append(row.itemClass)
        message.append(contentsOf: [UInt8](bigEndian: row.generation))
        message.append(contentsOf: row.identity)
        return key.authenticationCode(message)
    }

    /// What one row contributes to its format-4 scope shard (``LedgerShards``): the fields of
    /// ``element(_:key:vaultID:)`` and the row's scope digest, under a label of its own, so that
    /// a row whose scope digest was changed no longer adds up in either scope's shard.
    static func scopeElement(_ row: Row, scope: [UInt8], key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        var message = scopeRowLabel
        message.append(contentsOf: vaultID)
        message.append(contentsOf: [UInt8](bigEndian: UInt64(bitPattern: row.id)))
        message.append(row.itemClass)
        message.append(contentsOf: [UInt8](bigEndian: row.generation))
        message.append(UInt8(truncatingIfNeeded: row.identity.count))
        message.append(contentsOf: row.identity)
        message.append(contentsOf: scope)
        return key.authenticationCode(message)
    }

    /// The element of a sync journal row (``VaultSchema/syncObjects``): its identity, whether
    /// it is pending, and its sealed record, so that a journal row deleted, put back from an
    /// older copy or flipped from pending to sent is caught like an item row.
    static func journalElement(identity: [UInt8], pending: Bool, record: [UInt8], key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        var message = journalLabel
        message.append(contentsOf: vaultID)
        message.append(pending ? 1 : 0)
        message.append(contentsOf: record.withUnsafeBytes { Digest.sha256($0) })
        message.append(contentsOf: identity)
        return key.authenticationCode(message)
    }

    /// The stored form: generation u64 | count u64 | digest | tag, big-endian.
    func encoded(key: HMACKey, vaultID: [UInt8]) -> [UInt8] {
        TaggedRecord.seal(fields, context: Self.ledgerLabel + vaultID, key: key)
    }

    /// The ledger a stored blob holds, or nil when its tag does not verify under `key` (altered,
    /// or written under other keys) or it is malformed.
    static func decode(_ bytes: [UInt8], key: HMACKey, vaultID: [UInt8]) -> ItemLedger? {
        guard let body = TaggedRecord.open(bytes, bodySize: encodedSize - Digest.size, context: ledgerLabel + vaultID, key: key) else { return nil }
        return ItemLedger(generation: integer(body, at: 0), tally: LedgerTally(count: integer(body, at: 8), digest: Array(body[16..<(16 + Digest.size)])))
    }

    private var fields: [UInt8] { [UInt8](bigEndian: generation) + [UInt8](bigEndian: tally.count) + tally.digest }

    static func integer(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<(offset + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    static let rowLabel = Array("swift-keychain ledger row v2".utf8)
    static let scopeRowLabel = Array("swift-keychain ledger scope row v4".utf8)
    private static let journalLabel = Array("swift-keychain ledger journal v1".utf8)
    private static let ledgerLabel = Array("swift-keychain ledger v2".utf8)
}

/// The newest ledger generation this boot has seen of each recently written vault: one key in
/// the user's kernel keyring for all of them (so that vaults written by the hundred, in a test
/// suite, never eat into the user's key quota), holding at most ``capacity`` entries, the most
/// recently written last. Each entry (vault id, generation, tag) is tagged with its vault's
/// ledger key, so that an entry planted by another process of the user is ignored: it can
/// neither lower nor raise what is trusted. Updates are read, change, replace; one lost to a
/// concurrent update is made again (``VaultState/rememberGeneration()``).
enum GenerationTable {
    static let description = "swift-keychain:v1:generations"
    static let capacity = 64
    static let entrySize = 16 + 8 + Digest.size

    /// The stored entries, oldest first; a malformed payload reads as none.
    static func entries(_ payload: SecretBytes?) -> [[UInt8]] {
        guard let payload else { return [] }
        let bytes = payload.withUnsafeBytes { Array($0) }
        guard bytes.count % entrySize == 0 else { return [] }
        return stride(from: 0, to: bytes.count, by: entrySize).map { Array(bytes[$0..<($0 + entrySize)]) }
    }

    /// The key of a vault's entry: 16 bytes digested from its id and the place it lives (its
    /// directory resolved, so that every path to one file names one entry). A copy of the vault
    /// elsewhere is another entry.
    static func recordID(vaultID: [UInt8], path: String) -> [UInt8] {
        let location = VaultLocation(path: path)
        let directory = (try? SystemCall.realpath(location.directory)) ?? location.directory
        let place = directory + "/" + String(path.split(separator: "/").last ?? "")
        return Array(Digest.sha256(vaultID + Array(place.utf8)).prefix(16))
    }

    /// The generation recorded under `recordID`, when an entry for it verifies under `key`.
    static func generation(in payload: SecretBytes?, key: HMACKey, recordID: [UInt8]) -> UInt64? {
        for entry in entries(payload).reversed() where Array(entry[0..<16]) == recordID {
            let body = Array(entry[16..<24])
            if Digest.equal(key.authenticationCode(label + recordID + body), Array(entry[24...])) { return ItemLedger.integer(body, at: 0) }
        }
        return nil
    }

    /// The table with `recordID` at `generation` (any other entry for it, planted or old, dropped),
    /// the oldest entries dropped beyond ``capacity``.
    /// `keepingOthers`: the other entries for `recordID` stay (a key rotation records its new
    /// generation under its new key before it commits, beside the entry under the old one).
    static func recording(_ generation: UInt64, in payload: SecretBytes?, key: HMACKey, recordID: [UInt8], keepingOthers: Bool = false) -> SecretBytes {
        let body = [UInt8](bigEndian: generation)
        let entry = recordID + body + key.authenticationCode(label + recordID + body)
        let kept = (entries(payload).filter { keepingOthers || Array($0[0..<16]) != recordID } + [entry]).suffix(capacity)
        return SecretBytes(kept.joined())
    }

    /// The table without `recordID`'s entries.
    static func forgetting(_ recordID: [UInt8], in payload: SecretBytes?) -> SecretBytes {
        SecretBytes(entries(payload).filter { Array($0[0..<16]) != recordID }.joined())
    }

    private static let label = Array("swift-keychain generation v3".utf8)
}
