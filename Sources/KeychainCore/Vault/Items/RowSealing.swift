/// How an item's row is sealed and opened in one vault: each sealed part (attributes, value)
/// is bound, as associated data, to the vault's id, the row's identity digest, its class, its
/// protection code (class and access control), the part, and the generation that wrote it, so
/// that it opens in no other row, class, protection, part or row version. Sealed parts are
/// padded to their size bucket first (``SizePadding``): a ciphertext's length tells only the
/// bucket. A row of generation 0, still sealed the format-1 way, has neither padding nor a
/// generation in its associated data.
///
/// A value: it finds no key, holds no lock and decides nothing about presence. ``VaultState``
/// looks the class key up (and drops keys another process rotated), trusts the presence public
/// key, and brings a read's proof of presence.
struct RowSealing {
    let vaultID: [UInt8]

    /// The associated data of `part` of a row of `identity`, `itemClass` and `protection`, sealed at `generation`.
    func associatedData(identity: [UInt8], itemClass: ItemClass, protection: UInt8, part: RecordCoding.Part, generation: UInt64) -> [UInt8] {
        RecordCoding.itemAssociatedData(vaultID: vaultID, identity: identity, itemClass: itemClass, protection: protection, part: part, generation: generation)
    }

    /// The associated data of `row`'s `part`, as stored.
    func associatedData(of row: ItemRow, _ part: RecordCoding.Part) -> [UInt8] {
        associatedData(identity: row.identity, itemClass: row.itemClass, protection: row.protection, part: part, generation: row.generation)
    }

    // MARK: - Sealing

    /// The record of an item of `itemClass` with `attributes` (their accessibility set) and
    /// `value`, under the digests `identity` and `scope`, sealed with its class's `key` at
    /// `generation`; a value behind an access control is sealed to `presencePublicKey` inside.
    func seal(
        _ itemClass: ItemClass, attributes: Attributes, value: SecretBytes?, identity: [UInt8], scope: [UInt8], generation: UInt64,
        key: SealingKey, presencePublicKey: [UInt8]?
    ) throws(OpenSSLError) -> SealedRecord {
        precondition(generation > 0, "a row sealed outside a ledger write")
        let protection = RecordCoding.protectionCode(attributes.accessibility!, attributes.accessControl)
        // Padded inside the seal: a ciphertext's length tells only its size bucket.
        let plainAttributes = RecordCoding.encode(attributes).withBytes { SizePadding.pad($0) }
        let plainValue = (value ?? SecretBytes([])).withUnsafeBytes { SizePadding.pad($0) }
        let sealedAttributes = try key.seal(
            plainAttributes,
            associatedData: associatedData(identity: identity, itemClass: itemClass, protection: protection, part: .attributes, generation: generation))
        let valueAAD = associatedData(identity: identity, itemClass: itemClass, protection: protection, part: .value, generation: generation)
        let sealedValue: [UInt8]
        if let presencePublicKey {
            let inner = try PresenceSeal.seal(plainValue, to: presencePublicKey, associatedData: valueAAD)
            sealedValue = try key.seal(inner, associatedData: valueAAD)
        } else {
            sealedValue = try key.seal(plainValue, associatedData: valueAAD)
        }
        return SealedRecord(identity: identity, scope: scope, attributes: sealedAttributes, value: sealedValue)
    }

    // MARK: - Opening

    /// How many bytes `row`'s sealed attributes open to, padding and all; nil when they are
    /// too short to be sealed at all.
    static func openedCount(ofAttributes row: ItemRow) -> Int? {
        let count = row.sealedAttributes.count - AESGCM.overhead
        return count >= 0 ? count : nil
    }

    /// Opens `row`'s attributes with its class's `key` into `out` (``openedCount(ofAttributes:)`` bytes).
    func openAttributes(of row: ItemRow, with key: SealingKey, into out: UnsafeMutableRawBufferPointer) throws(AESGCM.AuthenticationFailure) {
        try key.open(row.sealedAttributes, associatedData: associatedData(of: row, .attributes), into: out)
    }

    /// Opens `sealed`, `row`'s `part`, with its class's `key`: still padded, and a value
    /// behind an access control still under its presence seal (``openPresenceSeal(_:of:privateKey:publicKey:)``).
    func open(_ sealed: [UInt8], of row: ItemRow, part: RecordCoding.Part, with key: SealingKey) throws(AESGCM.AuthenticationFailure) -> SecretBytes {
        try key.open(sealed, associatedData: associatedData(of: row, part))
    }

    /// Opens the presence seal of `row`'s value (as ``open(_:of:part:with:)`` left it) with the
    /// presence key pair; nil when it fails authentication.
    func openPresenceSeal(_ opened: SecretBytes, of row: ItemRow, privateKey: SecretBytes, publicKey: [UInt8]) -> SecretBytes? {
        PresenceSeal.open(opened, privateKey: privateKey, publicKey: publicKey, associatedData: associatedData(of: row, .value))
    }

    /// How many of the opened bytes of `row`'s part are content, without the padding; nil when
    /// the padding is malformed.
    static func contentCount(_ opened: UnsafeRawBufferPointer, of row: ItemRow) -> Int? {
        row.generation > 0 ? SizePadding.contentCount(opened) : opened.count
    }

    /// What `row`'s part sealed, without the padding.
    static func unpadded(_ opened: SecretBytes, of row: ItemRow) throws(StoreError) -> SecretBytes {
        guard row.generation > 0 else { return opened }
        guard let content = SizePadding.unpad(opened) else { throw .corrupted("an item's padding is malformed") }
        return content
    }
}

/// An item's record as sealed for its row: its digests and its sealed parts.
struct SealedRecord {
    var identity: [UInt8]
    var scope: [UInt8]
    var attributes: [UInt8]
    var value: [UInt8]
}
