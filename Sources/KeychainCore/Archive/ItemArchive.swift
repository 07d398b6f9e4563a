import FoundationEssentials
internal import KeychainSystem

/// A portable, passphrase-protected archive of keychain items, made with the vault's own
/// primitives: scrypt of the passphrase, AES-256-GCM over everything, the header included as
/// associated data, so a flipped byte or a cut archive never decodes.
///
/// Layout: `SKCX` | version 1 | scrypt logN | salt (32) | sealed (nonce, ciphertext, tag) of
/// count u32, then per item: class code u8 | attributes length u32 | attributes (the vault's
/// record encoding) | value length u32 | value.
///
/// ThisDeviceOnly items (bound to this machine) and items under an access control (bound to
/// this vault's passphrase) are never exported, as Apple's keychain never moves them.
package enum ItemArchive {
    static let magic = Array("SKCX".utf8)
    static let version: UInt8 = 1

    /// What an export left out, and why.
    package struct Leftovers: Sendable, Equatable {
        /// ThisDeviceOnly items: bound to this machine.
        package var thisDeviceOnly = 0
        /// Items under an access control: bound to this vault's passphrase.
        package var accessControlled = 0
        /// Items of a class that is locked here (whenUnlocked after an idle timeout, say): they
        /// could not be read. Left behind only when the caller asked to skip them.
        package var locked = 0
        /// Every item that stayed behind.
        package var total: Int { thisDeviceOnly + accessControlled + locked }
    }

    /// The archive of `items`, sealed under `passphrase`.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for an empty passphrase.
    package static func seal(_ items: [Item], passphrase: SecretBytes, parameters: ScryptParameters = .default) throws(StoreError) -> [UInt8] {
        guard passphrase.count > 0 else { throw .invalidArgument("the archive passphrase is empty") }
        let salt = Random.bytes(32)
        let header = magic + [version, parameters.logN] + salt
        let body = encode(items)
        defer { _ = body }
        let key = try StoreError.fromOpenSSL { () throws(OpenSSLError) in try Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters) }
        let sealed = try StoreError.fromOpenSSL { () throws(OpenSSLError) in try AESGCM.seal(body, key: key, associatedData: header) }
        return header + sealed
    }

    /// The items of an archive.
    /// - Throws: ``StoreError/corrupted(_:)`` for what is not an archive (or is cut short),
    ///   ``StoreError/wrongPassphrase`` when it does not open (a wrong passphrase and an altered
    ///   archive look alike by design), ``StoreError/unsupportedFormatVersion(_:)``.
    package static func open(_ bytes: [UInt8], passphrase: SecretBytes) throws(StoreError) -> [Item] {
        let headerSize = magic.count + 2 + 32
        guard bytes.count > headerSize + 28, bytes.starts(with: magic) else { throw .corrupted("not a keychain archive, or cut short") }
        guard bytes[4] == version else { throw .unsupportedFormatVersion(Int(bytes[4])) }
        let parameters = ScryptParameters(logN: bytes[5])
        guard parameters.isWithinLimits else { throw .corrupted("the archive asks for scrypt parameters outside the accepted range") }
        let header = Array(bytes[0..<headerSize])
        let salt = Array(bytes[6..<headerSize])
        let key = try StoreError.fromOpenSSL { () throws(OpenSSLError) in try Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters) }
        let body: SecretBytes
        do { body = try AESGCM.open(Array(bytes[headerSize...]), key: key, associatedData: header) } catch { throw .wrongPassphrase }
        guard let items = body.withUnsafeBytes({ decode($0) }) else { throw .corrupted("the archive's contents do not decode") }
        return items
    }

    /// Writes an archive to a new file (mode 0600), whole and synced; never over an existing one.
    /// - Throws: ``StoreError/invalidArgument(_:)`` when `path` exists, ``StoreError/io(_:)``.
    package static func write(_ archive: [UInt8], toNewFile path: String) throws(StoreError) {
        guard try VaultFile.createExclusively(SecretBytes(archive), at: path) else {
            throw .invalidArgument("\(path) already exists; an export never writes over a file")
        }
    }

    /// Whether `bytes` begin as an archive ``seal(_:passphrase:parameters:)`` writes does: a
    /// file that does not is no export at all, whatever passphrase is tried on it.
    package static func isArchive(_ bytes: [UInt8]) -> Bool { bytes.starts(with: magic) }

    /// An archive file's bytes (at most 64 MiB).
    package static func read(file path: String) throws(StoreError) -> [UInt8] {
        do {
            return try FileSystem.readAll(path, limit: 64 << 20).withUnsafeBytes { Array($0) }
        } catch {
            throw .io(error.description)
        }
    }

    private static func encode(_ items: [Item]) -> SecretBytes {
        var out: [UInt8] = []
        defer { out.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        append(UInt32(items.count), to: &out)
        for item in items {
            out.append(item.itemClass.code)
            let attributes = RecordCoding.encode(item.attributes)
            append(UInt32(attributes.count), to: &out)
            out += attributes
            let value = item.value ?? SecretBytes([])
            append(UInt32(value.count), to: &out)
            value.withUnsafeBytes { out += $0 }
        }
        return SecretBytes(out)
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer) -> [Item]? {
        var offset = 0
        func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        }
        func number() -> Int? { take(4).map { Int($0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) } }
        guard let count = number(), count <= bytes.count / 9 else { return nil }
        var items: [Item] = []
        items.reserveCapacity(count)
        for _ in 0..<count {
            guard let code = take(1)?.first, let itemClass = ItemClass(code: code),
                let attributesLength = number(), let encoded = take(attributesLength), let attributes = RecordCoding.decodeAttributes(encoded),
                let valueLength = number(), let value = take(valueLength)
            else { return nil }
            items.append(Item(itemClass, attributes: attributes, value: SecretBytes(value)))
        }
        return offset == bytes.count ? items : nil
    }

    private static func append(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
