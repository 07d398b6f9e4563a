/// The canonical bytes the vault seals, digests and binds as associated data.
///
/// Attributes are a sequence of (field tag u8, length u32, bytes) entries in tag order; the
/// same encoding feeds the lookup digests, so "absent" and "present but empty" never collide.
enum RecordCoding {
    static func encode(_ attributes: Attributes, fields: [AttributeField] = AttributeField.allCases) -> [UInt8] {
        var out: [UInt8] = []
        encode(attributes, fields: fields, into: &out)
        return out
    }

    /// Appends the encoding to `out`. Text is copied straight from each string's UTF-8 (every
    /// read that misses the identity memo encodes its identity: building an array per field
    /// was a third of such a read).
    static func encode(_ attributes: Attributes, fields: [AttributeField], into out: inout [UInt8]) {
        func header(_ field: AttributeField, _ count: Int) {
            out.append(field.rawValue)
            out.appendBigEndian(UInt32(count))
        }
        for field in fields {
            if var text = field.text(in: attributes) {
                text.withUTF8 { bytes in
                    header(field, bytes.count)
                    out.append(contentsOf: bytes)
                }
            } else if let bytes = field.encode(attributes) {
                header(field, bytes.count)
                out.append(contentsOf: bytes)
            }
        }
    }

    /// Parses attribute records; nil when the bytes are malformed (unknown tag, bad length,
    /// a value of the wrong shape), which after a successful decryption means a format bug
    /// or a forged record, never something to guess around. With `fields`, only those are
    /// decoded; the others are passed over, their tags and lengths still checked (a listing
    /// that needs accounts spent most of its decoding on strings and dates it threw away).
    static func decodeAttributes(_ bytes: UnsafeRawBufferPointer, fields: AttributeField.Mask? = nil) -> Attributes? {
        var reader = ByteReader(bytes)
        var attributes = Attributes()
        var lastTag: UInt8 = 0
        while reader.remaining > 0 {
            guard let tag = reader.u8(), tag > lastTag, let field = AttributeField(rawValue: tag),
                let length = reader.u32(), let value = reader.slice(Int(length)),
                fields?.contains(field) == false || field.decode(value, into: &attributes)
            else { return nil }
            lastTag = tag
        }
        return attributes
    }

    enum Part: UInt8 {
        case attributes = 1
        case value = 2
    }

    /// Associated data of an item's sealed parts: binds the ciphertext to its vault, its row
    /// identity, its class, its protection code (class and access control) and its part; in
    /// format 2 also to the generation that wrote the row, so that each part opens only in the
    /// row version it was sealed for. Generation 0 is a row still sealed the format-1 way.
    static func itemAssociatedData(
        vaultID: [UInt8], identity: [UInt8], itemClass: ItemClass, protection: UInt8, part: Part,
        generation: UInt64
    ) -> [UInt8] {
        // Written in one allocation, field by field: this runs for every row a read opens, and
        // appending arrays (and the integers as arrays) cost more than the hashing of them.
        let count = itemLabel.count + 2 + vaultID.count + identity.count + 3 + (generation > 0 ? 8 : 0)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var offset = 0
            func put(_ bytes: [UInt8]) {
                bytes.withUnsafeBufferPointer { source in
                    guard let base = source.baseAddress else { return }
                    (buffer.baseAddress! + offset).initialize(from: base, count: source.count)
                    offset += source.count
                }
            }
            func put<T: FixedWidthInteger>(_ value: T) {
                withUnsafeBytes(of: value.bigEndian) { source in
                    for byte in source {
                        buffer[offset] = byte
                        offset += 1
                    }
                }
            }
            put(itemLabel)
            put(UInt16(generation == 0 ? 1 : 2))
            put(vaultID)
            put(identity)
            put(itemClass.code)
            put(protection)
            put(part.rawValue)
            if generation > 0 { put(generation) }
            initialized = offset
        }
    }

    /// The stored protection code: the accessibility class in the low nibble, the access
    /// control (0 for none) in the high one. Items without access control keep the bare class
    /// code, so their associated data is what it always was.
    static func protectionCode(_ accessibility: Accessibility, _ accessControl: AccessControl?) -> UInt8 {
        accessibility.code | ((accessControl?.rawValue ?? 0) << 4)
    }

    static func protection(code: UInt8) -> (Accessibility, AccessControl?)? {
        guard let accessibility = Accessibility(code: code & 0x0F) else { return nil }
        if code >> 4 == 0 { return (accessibility, nil) }
        guard let control = AccessControl(rawValue: code >> 4) else { return nil }
        return (accessibility, control)
    }

    private static let itemLabel = Array("SKCV-item".utf8)

    static func classKeyAssociatedData(vaultID: [UInt8], accessibility: Accessibility) -> [UInt8] {
        var out = Array("SKCV-class-key".utf8)
        // Class keys are wrapped as format 1 wrapped them: an upgrade keeps them.
        out.append(contentsOf: [UInt8](bigEndian: UInt16(1)))
        out.append(contentsOf: vaultID)
        out.append(accessibility.code)
        return out
    }

    static func masterKeyAssociatedData(_ header: VaultHeader) -> [UInt8] {
        Array("SKCV-master-key".utf8) + header.authenticatedFields
    }

    /// The digest that identifies an item (its primary key) without revealing it.
    static func identityMessage(_ itemClass: ItemClass, _ attributes: Attributes) -> [UInt8] {
        var out = messageHead(0x49, itemClass, capacity: 128)
        encode(attributes.normalizedIdentity(for: itemClass), fields: AttributeField.identity(of: itemClass), into: &out)
        return out
    }

    /// The fields that scope an item for listing: access group, service or server, synchronizable.
    static func scopeFields(_ itemClass: ItemClass) -> [AttributeField] {
        [.accessGroup, AttributeField.scope(of: itemClass), .synchronizable]
    }

    static func identityMask(_ itemClass: ItemClass) -> AttributeField.Mask {
        itemClass == .genericPassword ? genericIdentityMask : internetIdentityMask
    }

    static func scopeMask(_ itemClass: ItemClass) -> AttributeField.Mask {
        itemClass == .genericPassword ? genericScopeMask : internetScopeMask
    }

    private static let genericIdentityMask = AttributeField.Mask(AttributeField.identity(of: .genericPassword))
    private static let internetIdentityMask = AttributeField.Mask(AttributeField.identity(of: .internetPassword))
    private static let genericScopeMask = AttributeField.Mask(scopeFields(.genericPassword))
    private static let internetScopeMask = AttributeField.Mask(scopeFields(.internetPassword))

    /// A digest message's tag and class, in an array reserved for the whole message (a literal
    /// then a reserve is two allocations).
    private static func messageHead(_ tag: UInt8, _ itemClass: ItemClass, capacity: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        out.append(tag)
        out.append(itemClass.code)
        return out
    }

    static func scopeMessage(_ itemClass: ItemClass, _ attributes: Attributes) -> [UInt8] {
        var out = messageHead(0x53, itemClass, capacity: 96)
        encode(attributes.normalizedIdentity(for: itemClass), fields: scopeFields(itemClass), into: &out)
        return out
    }
}
