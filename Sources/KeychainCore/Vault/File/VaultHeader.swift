/// The vault's header: format version, vault id, how the vault key is protected, and the
/// master key wrapped under it. Stored as one blob with a SHA-256 checksum, so that accidental
/// damage reads as "corrupted"; every field is also bound as associated data to the wrapped
/// master key, so a deliberate change fails authentication.
///
/// Layout (big-endian): magic "SKCV" | version u16 | vault id (16) | protection u8 |
/// scrypt logN u8 | r u32 | p u32 | salt (32) | wrapped length u16 | wrapped master key |
/// SHA-256 of everything before it (32).
struct VaultHeader: Equatable {
    static let magic: [UInt8] = Array("SKCV".utf8)
    static let currentVersion: UInt16 = 4
    static let vaultIDSize = 16
    static let saltSize = 32

    enum Protection: Equatable {
        /// The vault key is a random key file beside the vault: no passphrase.
        case keyFile
        /// The vault key comes from a passphrase through scrypt.
        case passphrase(ScryptParameters, salt: [UInt8])
    }

    var version: UInt16 = currentVersion
    var vaultID: [UInt8]
    var protection: Protection
    var wrappedMasterKey: [UInt8] = []

    var hasPassphrase: Bool {
        if case .passphrase = protection { return true }
        return false
    }

    /// Every field but the wrapped key: the associated data of that key.
    var authenticatedFields: [UInt8] {
        var out = Self.magic
        out.append(contentsOf: [UInt8](bigEndian: version))
        out.append(contentsOf: vaultID)
        switch protection {
        case .keyFile:
            out.append(0)
            out.append(contentsOf: [UInt8](repeating: 0, count: 1 + 4 + 4 + Self.saltSize))
        case .passphrase(let parameters, let salt):
            out.append(1)
            out.append(parameters.logN)
            out.append(contentsOf: [UInt8](bigEndian: parameters.r))
            out.append(contentsOf: [UInt8](bigEndian: parameters.p))
            out.append(contentsOf: salt)
        }
        return out
    }

    func encoded() -> [UInt8] {
        var out = authenticatedFields
        out.append(contentsOf: [UInt8](bigEndian: UInt16(wrappedMasterKey.count)))
        out.append(contentsOf: wrappedMasterKey)
        out.append(contentsOf: Digest.sha256(out))
        return out
    }

    /// Parses and validates a header, refusing scrypt parameters outside the vault's limits
    /// (too weak to protect, or costly enough to be a denial of service).
    static func decode(_ bytes: [UInt8]) throws(StoreError) -> VaultHeader {
        try bytes.withBytes { (raw: UnsafeRawBufferPointer) throws(StoreError) -> VaultHeader in try decode(bytes, raw) }
    }

    private static func decode(_ bytes: [UInt8], _ raw: UnsafeRawBufferPointer) throws(StoreError) -> VaultHeader {
        var reader = ByteReader(raw)
        guard let magic = reader.take(4), magic == Self.magic else {
            throw .corrupted("not a keychain vault (bad magic)")
        }
        guard let version = reader.u16() else { throw .corrupted("header truncated") }
        guard version <= currentVersion, version >= 1 else { throw .unsupportedFormatVersion(Int(version)) }
        let fixed = 4 + 2 + vaultIDSize + 1 + 1 + 4 + 4 + saltSize + 2
        guard bytes.count >= fixed + 32 else { throw .corrupted("header truncated") }
        let body = Array(bytes[0..<(bytes.count - 32)])
        guard Digest.equal(Digest.sha256(body), Array(bytes[(bytes.count - 32)...])) else {
            throw .corrupted("header checksum mismatch")
        }
        guard let vaultID = reader.take(vaultIDSize), let kind = reader.u8(), let logN = reader.u8(),
            let r = reader.u32(), let p = reader.u32(), let salt = reader.take(saltSize),
            let wrappedLength = reader.u16(), let wrapped = reader.take(Int(wrappedLength)),
            reader.remaining == 32
        else { throw .corrupted("header malformed") }
        let protection: Protection
        switch kind {
        case 0:
            protection = .keyFile
        case 1:
            let parameters = ScryptParameters(logN: logN, r: r, p: p)
            guard parameters.isWithinLimits else {
                throw .tampered("scrypt parameters N=2^\(logN) r=\(r) p=\(p) are outside the accepted range (r=8, p=1, N from 2^14 to 2^18: at most 256 MiB and about a second)")
            }
            protection = .passphrase(parameters, salt: salt)
        default:
            throw .corrupted("unknown key protection \(kind)")
        }
        guard wrapped.count == 32 + AESGCM.overhead else { throw .corrupted("wrapped master key has the wrong size") }
        return VaultHeader(version: version, vaultID: vaultID, protection: protection, wrappedMasterKey: wrapped)
    }
}

/// Reads big-endian fields from untrusted bytes without ever trapping or copying: every field
/// is a slice of the buffer, valid while the buffer is.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    var remaining: Int { bytes.count - offset }

    mutating func slice(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }
    mutating func take(_ count: Int) -> [UInt8]? { slice(count).map { Array($0) } }
    mutating func u8() -> UInt8? { slice(1)?[0] }
    mutating func u16() -> UInt16? { slice(2).map { UInt16(bigEndian: $0.loadUnaligned(as: UInt16.self)) } }
    mutating func u32() -> UInt32? { slice(4).map { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) } }
}
