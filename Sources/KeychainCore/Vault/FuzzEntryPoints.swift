/// The vault's parsers of untrusted bytes, reachable by the fuzz targets (`Fuzz/`) and their
/// regression tests. Not API: each returns whether the input parsed, and must never crash.
@_spi(Fuzzing) public enum FuzzEntryPoints {
    /// The vault header, as read from a vault file.
    public static func vaultHeader(_ bytes: [UInt8]) -> Bool {
        guard let header = try? VaultHeader.decode(bytes) else { return false }
        // A decoded header must re-encode to what was read.
        precondition(header.encoded() == bytes, "a header decoded but does not re-encode to its bytes")
        return true
    }

    /// Decrypted attribute records.
    public static func attributes(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { RecordCoding.decodeAttributes($0) } != nil
    }

    /// A kernel-keyring cache payload (another process of the user may have written it).
    public static func cachePayload(_ bytes: [UInt8]) -> Bool {
        var ring = KeyRing()
        return ring.adopt(cachePayload: SecretBytes(bytes))
    }

    /// The presence key record of the meta table.
    public static func presenceKeyRecord(_ bytes: [UInt8]) -> Bool {
        PresenceKeyRecord.decode(bytes) != nil
    }

    private static let stateKey = HMACKey(SecretBytes([UInt8](repeating: 0x5A, count: 32)))
    private static let stateVault = [UInt8](repeating: 0xA5, count: VaultHeader.vaultIDSize)

    /// The vault's state records: the item ledger, its root and group records (meta), the
    /// generation table (the kernel keyring, which another process of the user may write), and
    /// the size padding of what is sealed. Checks what each promises: a ledger or root
    /// re-encodes to what it decoded from, a group record opens only at its own generation, a
    /// table keeps at most its capacity and always finds the entry just recorded, padding
    /// round-trips.
    public static func vaultState(_ bytes: [UInt8]) -> Bool {
        let ledger = ItemLedger.decode(bytes, key: stateKey, vaultID: stateVault)
        if let ledger { precondition(ledger.encoded(key: stateKey, vaultID: stateVault) == bytes, "a ledger does not re-encode to its bytes") }
        if bytes.count >= 48 {
            let tally = LedgerTally(count: ItemLedger.integer(bytes, at: 8), digest: Array(bytes[16..<48]))
            let made = ItemLedger(generation: ItemLedger.integer(bytes, at: 0), tally: tally)
            precondition(ItemLedger.decode(made.encoded(key: stateKey, vaultID: stateVault), key: stateKey, vaultID: stateVault) == made, "a ledger does not round-trip")
            // A group's record opens only for its own group and generation.
            let group = Int(bytes[0]) % LedgerShards.groupCount, generation = made.generation
            var tallies = LedgerTallies(count: LedgerShards.shards(ofGroup: group).count)
            for index in 0..<tallies.count { tallies[index] = tally }
            let record = LedgerShards.encodedRecord(tallies, group: group, generation: generation, key: stateKey, vaultID: stateVault)
            precondition(
                LedgerShards.decodeRecord(record, group: group, generation: generation, key: stateKey, vaultID: stateVault) == tallies,
                "a group record does not round-trip")
            precondition(
                LedgerShards.decodeRecord(record, group: group, generation: generation &+ 1, key: stateKey, vaultID: stateVault) == nil,
                "a group record opens at another generation")
        }
        if let root = LedgerRoot.decode(bytes, key: stateKey, vaultID: stateVault) {
            precondition(root.encoded(key: stateKey, vaultID: stateVault) == bytes, "a ledger root does not re-encode to its bytes")
        }
        for group in [0, LedgerShards.groupCount - 1] {
            guard let tallies = LedgerShards.decodeRecord(bytes, group: group, generation: 1, key: stateKey, vaultID: stateVault) else { continue }
            precondition(
                LedgerShards.encodedRecord(tallies, group: group, generation: 1, key: stateKey, vaultID: stateVault) == bytes, "a group record does not re-encode to its bytes")
        }
        _ = LedgerShards.group(ofRecordName: bytes)
        precondition(LedgerShards.shard(of: bytes) < LedgerShards.itemShards, "an identity falls outside the item shards")
        let table = SecretBytes(bytes)
        _ = GenerationTable.generation(in: table, key: stateKey, recordID: stateVault)
        let generation = UInt64(bytes.count)
        let recorded = GenerationTable.recording(generation, in: table, key: stateKey, recordID: stateVault)
        precondition(GenerationTable.entries(recorded).count <= GenerationTable.capacity, "the table grew past its capacity")
        precondition(GenerationTable.generation(in: recorded, key: stateKey, recordID: stateVault) == generation, "the entry just recorded is not found")
        precondition(
            GenerationTable.generation(in: GenerationTable.forgetting(stateVault, in: recorded), key: stateKey, recordID: stateVault) == nil, "a forgotten entry is still found")
        _ = SizePadding.unpad(SecretBytes(bytes))
        let padded = bytes.withUnsafeBytes { SizePadding.pad($0) }
        precondition(padded.count == SizePadding.bucket(for: bytes.count) && SizePadding.unpad(padded) == table, "padding does not round-trip")
        return ledger != nil
    }
}
