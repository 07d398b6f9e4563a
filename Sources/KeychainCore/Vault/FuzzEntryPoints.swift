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
}
