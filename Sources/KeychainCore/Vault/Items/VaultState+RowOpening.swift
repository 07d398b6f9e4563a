import FoundationEssentials

/// A row's sealed parts opened (``RowSealing``) with the class key this process holds: the
/// attributes (checked against the scope that selected the row), the value (after a proof of
/// presence where an access control asks for one), each its padding removed.
extension VaultState {
    /// The row's attributes, opened and decoded in a locked buffer: `scratch`'s (a listing
    /// passes one for all its rows), or one of their own; with `fields`, only those (the
    /// accessibility and access control always, from the row).
    ///
    /// - Throws: ``StoreError/tampered(_:)`` when they fail authentication, or when `scope`
    ///   is given and they lie outside it (the row was moved into another scope).
    func decryptAttributes(
        _ row: ItemRow, scratch: RowScratch? = nil, fields: AttributeField.Mask? = nil, scope: ScopeCheck? = nil
    ) throws(StoreError) -> Attributes {
        if let attributes = row.attributes { return attributes }
        // Decoded where they were opened, padding and all: a copy without the padding was a
        // second locked allocation per row.
        func decode(_ bytes: UnsafeRawBufferPointer) throws(StoreError) -> Attributes {
            guard let count = RowSealing.contentCount(bytes, of: row) else { throw .corrupted("an item's padding is malformed") }
            let record = UnsafeRawBufferPointer(rebasing: bytes[..<count])
            guard var attributes = RecordCoding.decodeAttributes(record, fields: fields) else {
                throw .corrupted("an item's attributes do not decode")
            }
            if let scope, !scope.holds(in: record) { throw ScopeCheck.outOfScope }
            // The protection code is authenticated as associated data, so it is the truth.
            attributes.accessibility = row.accessibility
            attributes.accessControl = row.accessControl
            return attributes
        }
        let key: SealingKey
        if let scratch {
            key = try scratch.classKey(row.accessibility) { (accessibility: Accessibility) throws(StoreError) in try classKey(accessibility, create: false) }
        } else {
            key = try classKey(row.accessibility, create: false)
        }
        guard let plainCount = RowSealing.openedCount(ofAttributes: row) else {
            scratch?.forgetClassKey()
            throw authenticationFailed(.attributes)
        }
        return try (scratch?.plaintext ?? LockedScratch()).withBuffer(count: plainCount) { (out: UnsafeMutableRawBufferPointer) throws(StoreError) -> Attributes in
            do {
                try sealing.openAttributes(of: row, with: key, into: out)
            } catch {
                // Finding the keys rotated drops them: the next row looks its key up again.
                scratch?.forgetClassKey()
                throw authenticationFailed(.attributes)
            }
            return try decode(UnsafeRawBufferPointer(out))
        }
    }

    /// A sealed part that did not open: damage, unless another process rotated the keys (a
    /// rekey), which locks this one.
    private func authenticationFailed(_ part: RecordCoding.Part) -> StoreError {
        if (try? dropKeysIfRotated()) == true { return .locked }
        return .tampered("an item's \(part == .value ? "value" : "attributes") failed authentication")
    }

    /// What a row sealed, without the size padding format 2 adds; a value behind an access
    /// control does not open (``StoreError/interactionNotAllowed``): a read that holds a proof
    /// passes its ``ReadContext``.
    func open(_ sealed: [UInt8], row: ItemRow, part: RecordCoding.Part) throws(StoreError) -> SecretBytes {
        var withoutProof = ReadContext()
        return try open(sealed, row: row, part: part, context: &withoutProof)
    }

    /// What a row sealed (a value, under its access control's presence seal too, opened with
    /// the context's presence key), without the size padding format 2 adds.
    func open(_ sealed: [UInt8], row: ItemRow, part: RecordCoding.Part, context: inout ReadContext) throws(StoreError) -> SecretBytes {
        let key = try classKey(row.accessibility, create: false)
        let opened: SecretBytes
        do {
            opened = try sealing.open(sealed, of: row, part: part, with: key)
        } catch {
            throw authenticationFailed(part)
        }
        guard part == .value, let accessControl = row.accessControl else { return try RowSealing.unpadded(opened, of: row) }
        guard let presenceKey = context.presenceKey, let record = try storedPresenceKey() else {
            context.presenceNeeded = accessControl
            throw .interactionNotAllowed
        }
        guard let value = sealing.openPresenceSeal(opened, of: row, privateKey: presenceKey, publicKey: record.publicKey) else {
            throw .tampered("an item's value failed authentication under the presence key")
        }
        return try RowSealing.unpadded(value, of: row)
    }
}
