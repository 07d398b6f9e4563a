import KeychainTestSupport
import Testing

@testable import KeychainCore

/// How a row's parts are sealed (``RowSealing``), pinned: parts sealed once by the vault's code
/// open to their plaintext, and to nothing once any one field they are bound to changes.
@Suite("Row sealing: a sealed part opens only in the vault, row, class, protection, part and generation it was sealed for")
struct RowSealingTests {
    static let key = SealingKey(SecretBytes((1...32).map { UInt8($0) }))
    static let vaultID = [UInt8](repeating: 0x5A, count: VaultHeader.vaultIDSize)
    static let identity = [UInt8](repeating: 0xA5, count: Digest.size)

    /// "correct horse battery staple", sealed as the value of ``row(sealedAttributes:)`` in ``vaultID`` under ``key``.
    static let pinnedValue = CryptoVectorTests.hex(
        "a44778403820fc2e9424ad48979286ad744aba08da126c09f0542d6385e3a8e0a9d08ca19def3d794402448f29d0a28bc07de5e68470b2cdb8acda7b")
    /// "attributes as sealed", sealed as the attributes of the same row.
    static let pinnedAttributes = CryptoVectorTests.hex(
        "f4d365457500f22ba149894b52d5ee5d9ca322748998d3bdd0cffd7fac5b9e694897c2076cf5c37ebe3debad14d49e99334e888eaa9bfeaa6c2aca66")

    /// The row the pinned parts were sealed for: a generic password, afterFirstUnlock, generation 7.
    static func row(sealedAttributes: [UInt8] = pinnedAttributes) -> ItemRow {
        ItemRow(
            id: 1, itemClass: .genericPassword, accessibility: .afterFirstUnlock, accessControl: nil, identity: identity,
            sealedAttributes: sealedAttributes, value: nil, generation: 7, scope: [UInt8](repeating: 0x33, count: Digest.size), attributes: nil)
    }

    /// A record holding `value`, sealed now for the row of ``row(sealedAttributes:)`` (with
    /// another protection when given).
    static func sealedNow(
        _ value: String, accessibility: Accessibility = .afterFirstUnlock, accessControl: AccessControl? = nil, presencePublicKey: [UInt8]? = nil
    ) throws -> SealedRecord {
        var attributes = Attributes(service: "s", account: "a")
        attributes.accessibility = accessibility
        attributes.accessControl = accessControl
        return try RowSealing(vaultID: vaultID).seal(
            .genericPassword, attributes: attributes, value: SecretBytes(utf8: value), identity: identity, scope: row().scope, generation: 7,
            key: key, presencePublicKey: presencePublicKey)
    }

    /// One field a sealed part is bound to, changed.
    enum Change: CaseIterable, Sendable {
        case vaultID, identity, itemClass, protection, accessControl, part, generation

        func apply(_ sealing: inout RowSealing, _ row: inout ItemRow, _ part: inout RecordCoding.Part) {
            switch self {
            case .vaultID: sealing = RowSealing(vaultID: [UInt8](repeating: 0x5B, count: VaultHeader.vaultIDSize))
            case .identity: row.identity[0] ^= 1
            case .itemClass: row.itemClass = .internetPassword
            case .protection: row.accessibility = .whenUnlocked
            case .accessControl: row.accessControl = .userPresence
            case .part: part = .attributes
            case .generation: row.generation = 8
            }
        }
    }

    func opened(_ sealing: RowSealing, _ row: ItemRow, _ part: RecordCoding.Part, _ sealed: [UInt8] = pinnedValue) -> String? {
        guard let opened = try? sealing.open(sealed, of: row, part: part, with: Self.key) else { return nil }
        return (try? RowSealing.unpadded(opened, of: row))?.string
    }

    @Test("a value sealed by the vault's code opens to its plaintext, its padding removed")
    func thePinnedValueOpens() {
        #expect(opened(RowSealing(vaultID: Self.vaultID), Self.row(), .value) == "correct horse battery staple")
    }

    @Test("sealed attributes open in place, and their content is counted without the padding")
    func thePinnedAttributesOpen() throws {
        let sealing = RowSealing(vaultID: Self.vaultID)
        let row = Self.row()
        let count = try #require(RowSealing.openedCount(ofAttributes: row))
        #expect(count == SizePadding.bucket(for: "attributes as sealed".utf8.count))
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { out.deallocate() }
        try sealing.openAttributes(of: row, with: Self.key, into: out)
        let content = try #require(RowSealing.contentCount(UnsafeRawBufferPointer(out), of: row))
        #expect(String(decoding: out[..<content], as: UTF8.self) == "attributes as sealed")
        #expect(RowSealing.openedCount(ofAttributes: Self.row(sealedAttributes: [1, 2, 3])) == nil, "shorter than a seal's overhead")
    }

    @Test("changing any one field a sealed part is bound to makes it fail, pinned or sealed now", arguments: Change.allCases)
    func aChangedFieldFails(_ change: Change) throws {
        var sealing = RowSealing(vaultID: Self.vaultID)
        let fresh = try Self.sealedNow("now")
        #expect(opened(sealing, Self.row(), .value, fresh.value) == "now")
        var row = Self.row()
        var part = RecordCoding.Part.value
        change.apply(&sealing, &row, &part)
        #expect(opened(sealing, row, part) == nil)
        #expect(opened(sealing, row, part, fresh.value) == nil)
    }

    @Test("a record sealed now opens back in its row, each part padded to its size bucket")
    func aSealedRecordOpensBack() throws {
        let sealing = RowSealing(vaultID: Self.vaultID)
        let record = try Self.sealedNow("v")
        #expect(record.identity == Self.identity && record.scope == Self.row().scope)
        #expect(record.value.count == SizePadding.bucket(for: 1) + AESGCM.overhead)
        var row = Self.row(sealedAttributes: record.attributes)
        #expect(try RowSealing.unpadded(sealing.open(record.value, of: row, part: .value, with: Self.key), of: row).string == "v")
        row.generation = 6
        #expect(throws: AESGCM.AuthenticationFailure.self) { try sealing.open(record.value, of: row, part: .value, with: Self.key) }
    }

    @Test("a row of generation 0, sealed the format-1 way, is taken without padding")
    func aFormatOneRowHasNoPadding() throws {
        var row = Self.row()
        row.generation = 0
        #expect(try RowSealing.unpadded(SecretBytes([1, 2, 0]), of: row).withUnsafeBytes { Array($0) } == [1, 2, 0])
        #expect([UInt8]([1, 2, 0]).withUnsafeBytes { RowSealing.contentCount($0, of: row) } == 3)
    }

    @Test("a value behind an access control opens only through its presence seal, with the key pair it was sealed to")
    func aPresenceValueNeedsItsSeal() throws {
        let sealing = RowSealing(vaultID: Self.vaultID)
        let pair = try X25519.generate()
        let record = try Self.sealedNow(
            "behind a proof", accessibility: .whenPasscodeSetThisDeviceOnly, accessControl: .userPresence, presencePublicKey: pair.publicKey)
        var row = Self.row(sealedAttributes: record.attributes)
        row.accessibility = .whenPasscodeSetThisDeviceOnly
        row.accessControl = .userPresence
        let outer = try sealing.open(record.value, of: row, part: .value, with: Self.key)
        #expect((try? RowSealing.unpadded(outer, of: row)) != SecretBytes(utf8: "behind a proof"), "still under the presence seal")
        let inner = try #require(sealing.openPresenceSeal(outer, of: row, privateKey: pair.privateKey, publicKey: pair.publicKey))
        #expect(try RowSealing.unpadded(inner, of: row).string == "behind a proof")
        let other = try X25519.generate()
        #expect(sealing.openPresenceSeal(outer, of: row, privateKey: other.privateKey, publicKey: other.publicKey) == nil)
    }
}
