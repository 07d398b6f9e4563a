import Dispatch
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The item table: applying writes, sealing records, reading and matching rows.
extension OpenVault {
    // MARK: - Operations (mutex held)

    func apply(_ operation: WriteOperation) throws(StoreError) -> Int {
        switch operation {
        case .add(let item):
            try checkSize(of: item.value)
            if try row(identity: identity(of: item), includeValue: false) != nil { throw .duplicateItem }
            try insert(item)
            return 1
        case .upsert(let item):
            try checkSize(of: item.value)
            guard var existing = try row(identity: identity(of: item), includeValue: item.value == nil) else {
                try insert(item)
                return 1
            }
            let old = try decryptAttributes(existing)
            existing.attributes = old
            try replace(existing, attributes: old.merging(item.attributes), value: item.value)
            return 1
        case .update(let query, let changes, let value):
            try checkSize(of: value)
            let rows = try matchingRows(query, includeValue: value == nil, needAttributes: true)
            guard !rows.isEmpty else { throw .itemNotFound }
            for existing in rows {
                try replace(existing, attributes: (existing.attributes ?? Attributes()).merging(changes), value: value)
            }
            return rows.count
        case .delete(let query):
            // A synchronizable item's delete travels, addressed by its attributes.
            let rows = try matchingRows(query, includeValue: false, needAttributes: syncEnrolled)
            try delete(rows)
            return rows.count
        }
    }

    /// Deletes `rows`, checking that each was there to delete.
    func delete(_ rows: [Row]) throws(StoreError) {
        let changed = try sql { () throws(SQLiteError) -> Int in
            let statement = try connection.statement(VaultSchema.deleteItem)
            var changed = 0
            for row in rows { changed += try statement.runCountingChanges([.integer(row.id)]) }
            return changed
        }
        guard changed == rows.count else { throw .tampered("a delete did not remove the rows it matched") }
        for row in rows {
            try ledgerRemove(row)
            if let attributes = row.attributes { journal(row.itemClass, attributes, identity: row.identity, deleted: true) }
        }
    }

    func checkSize(of value: SecretBytes?) throws(StoreError) {
        if let value, value.count > configuration.maximumValueSize {
            throw .valueTooLarge(limit: configuration.maximumValueSize)
        }
    }

    func identity(of item: Item) throws(StoreError) -> [UInt8] {
        try identityDigest(item.itemClass, item.attributes)
    }

    /// The identity digest of `attributes`, memoised: a program reads the same few items again
    /// and again, and encoding plus HMAC is a third of a read. The digests are not secret (the
    /// table stores them) and the lookup key never changes for a vault, so entries stay valid;
    /// the memo is bounded and dropped whole when full.
    func identityDigest(_ itemClass: ItemClass, _ attributes: Attributes) throws(StoreError) -> [UInt8] {
        let key = IdentityMemoKey(itemClass: itemClass, attributes: attributes)
        if let digest = identityMemo[key] { return digest }
        let digest = try lookupKey().authenticationCode(RecordCoding.identityMessage(itemClass, attributes))
        if identityMemo.count >= 1_024 { identityMemo.removeAll(keepingCapacity: true) }
        identityMemo[key] = digest
        return digest
    }

    func insert(_ item: Item) throws(StoreError) {
        var attributes = item.attributes.normalizedIdentity(for: item.itemClass)
        attributes.accessibility = attributes.accessibility ?? .whenUnlocked
        let now = Date()
        attributes.creationDate = now
        attributes.modificationDate = now
        let sealed = try seal(item.itemClass, attributes: attributes, value: item.value)
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.insertItem).run([
                .integer(Int64(item.itemClass.code)), .integer(Int64(RecordCoding.protectionCode(attributes.accessibility!, attributes.accessControl))),
                .blob(sealed.identity), .blob(sealed.scope), .blob(sealed.attributes), .blob(sealed.value), .integer(Int64(writeGeneration)),
            ])
        }
        try ledgerInsert(id: connection.lastInsertRowID, itemClass: item.itemClass, identity: sealed.identity)
        journal(item.itemClass, attributes, identity: sealed.identity, deleted: false)
    }

    /// Re-seals an existing row with new attributes (and value, or its old one), checking that
    /// a changed identity does not collide with another item.
    func replace(_ existing: Row, attributes: Attributes, value: SecretBytes?) throws(StoreError) {
        var attributes = attributes.normalizedIdentity(for: existing.itemClass)
        attributes.accessibility = attributes.accessibility ?? existing.accessibility
        attributes.accessControl = attributes.accessControl ?? existing.accessControl
        attributes.creationDate = existing.attributes?.creationDate ?? attributes.creationDate ?? Date()
        attributes.modificationDate = Date()
        let plaintext: SecretBytes
        if let value {
            plaintext = value
        } else if let sealed = existing.value {
            plaintext = try open(sealed, row: existing, part: .value)
        } else {
            plaintext = try open(try sealedValue(of: existing), row: existing, part: .value)
        }
        let sealed = try seal(existing.itemClass, attributes: attributes, value: plaintext)
        if sealed.identity != existing.identity, try row(identity: sealed.identity, includeValue: false) != nil {
            throw .duplicateItem
        }
        try overwrite(
            existing, protection: RecordCoding.protectionCode(attributes.accessibility!, attributes.accessControl), with: sealed,
            missing: "an update did not change the row it matched")
        if sealed.identity != existing.identity, let old = existing.attributes {
            journal(existing.itemClass, old.normalizedIdentity(for: existing.itemClass), identity: existing.identity, deleted: true)
        } else if let old = existing.attributes, SyncChange.travels(old), !SyncChange.travels(attributes) {
            // Made ThisDeviceOnly or put behind a proof: it leaves the other devices.
            journal(existing.itemClass, old.normalizedIdentity(for: existing.itemClass), identity: existing.identity, deleted: true)
        }
        journal(existing.itemClass, attributes, identity: sealed.identity, deleted: false)
    }

    /// Writes `sealed` over `row`, at the write's generation. A row that is not there any more
    /// was removed behind SQLite's back (the transaction saw it a moment ago): `missing` says
    /// which write noticed.
    func overwrite(_ row: Row, protection: UInt8, with sealed: SealedRecord, missing: String) throws(StoreError) {
        let changed = try sql { () throws(SQLiteError) -> Int in
            if sealed.identity == row.identity && sealed.scope == row.scope {
                return try connection.statement(VaultSchema.replaceItemKeepingDigests).runCountingChanges([
                    .integer(Int64(protection)), .blob(sealed.attributes), .blob(sealed.value), .integer(Int64(writeGeneration)), .integer(row.id),
                ])
            }
            return try connection.statement(VaultSchema.replaceItem).runCountingChanges([
                .integer(Int64(protection)), .blob(sealed.identity), .blob(sealed.scope), .blob(sealed.attributes), .blob(sealed.value),
                .integer(Int64(writeGeneration)), .integer(row.id),
            ])
        }
        guard changed == 1 else { throw .tampered(missing) }
        try ledgerRemove(row)
        try ledgerInsert(id: row.id, itemClass: row.itemClass, identity: sealed.identity)
    }

    struct SealedRecord {
        var identity: [UInt8]
        var scope: [UInt8]
        var attributes: [UInt8]
        var value: [UInt8]
    }

    func seal(_ itemClass: ItemClass, attributes: Attributes, value: SecretBytes?) throws(StoreError) -> SealedRecord {
        let accessibility = attributes.accessibility!
        let protection = RecordCoding.protectionCode(accessibility, attributes.accessControl)
        var presencePublicKey: [UInt8]?
        if let accessControl = attributes.accessControl {
            presencePublicKey = try trustedPresencePublicKey()
            if accessControl.needsBiometry && !PresenceAuthentication.defaultAuthenticator.offersBiometry {
                throw .unavailable("\(accessControl) needs a biometric authenticator and none is installed (PresenceAuthentication.setDefault)")
            }
        }
        let key = try classKey(accessibility, create: true)
        let lookup = try lookupKey()
        let identity = lookup.authenticationCode(RecordCoding.identityMessage(itemClass, attributes))
        let scope = lookup.authenticationCode(RecordCoding.scopeMessage(itemClass, attributes))
        let vaultID = header.vaultID
        let generation = writeGeneration
        precondition(generation > 0, "a row sealed outside a ledger write")
        // Padded inside the seal: a ciphertext's length tells only its size bucket.
        let plainAttributes = RecordCoding.encode(attributes).withBytes { SizePadding.pad($0) }
        let plainValue = (value ?? SecretBytes([])).withUnsafeBytes { SizePadding.pad($0) }
        return try Self.crypto { () throws(OpenSSLError) -> SealedRecord in
            let sealedAttributes = try key.seal(
                plainAttributes,
                associatedData: RecordCoding.itemAssociatedData(
                    vaultID: vaultID, identity: identity, itemClass: itemClass, protection: protection, part: .attributes, generation: generation))
            let valueAAD = RecordCoding.itemAssociatedData(
                vaultID: vaultID, identity: identity, itemClass: itemClass, protection: protection,
                part: .value, generation: generation)
            let sealedValue: [UInt8]
            if let presencePublicKey {
                let inner = try PresenceSeal.seal(plainValue, to: presencePublicKey, associatedData: valueAAD)
                sealedValue = try key.seal(inner, associatedData: valueAAD)
            } else {
                sealedValue = try key.seal(plainValue, associatedData: valueAAD)
            }
            return SealedRecord(identity: identity, scope: scope, attributes: sealedAttributes, value: sealedValue)
        }
    }

    // MARK: - Reading rows

    struct Row {
        var id: Int64
        var itemClass: ItemClass
        var accessibility: Accessibility
        var accessControl: AccessControl?
        var identity: [UInt8]
        var sealedAttributes: [UInt8]
        var value: [UInt8]?
        /// The generation that sealed the row; 0 for a row still sealed the format-1 way.
        var generation: UInt64
        /// The scope digest as stored (checked against the attributes wherever it selected the row).
        var scope: [UInt8]
        var attributes: Attributes?
    }

    func readRow(_ s: Statement, includeValue: Bool) throws(StoreError) -> Row {
        guard let itemClass = ItemClass(code: UInt8(truncatingIfNeeded: s.integer(1))),
            let (accessibility, accessControl) = RecordCoding.protection(code: UInt8(truncatingIfNeeded: s.integer(2)))
        else { throw .corrupted("an item has an unknown class or protection code") }
        return Row(
            id: s.integer(0), itemClass: itemClass, accessibility: accessibility, accessControl: accessControl, identity: s.blob(3),
            sealedAttributes: s.blob(4), value: includeValue ? s.blob(5) : nil, generation: UInt64(bitPattern: s.integer(6)), scope: s.blob(7))
    }

    func row(identity: [UInt8], includeValue: Bool) throws(StoreError) -> Row? {
        let statement = try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.selectByIdentity(format: Int(header.version))) }
        return try fetch(statement, [.blob(identity)], includeValue: includeValue, limit: 1).first
    }

    func sealedValue(of row: Row) throws(StoreError) -> [UInt8] {
        try sql { () throws(SQLiteError) -> [UInt8] in
            try connection.statement(VaultSchema.selectValue).with([.integer(row.id)]) { (s: Statement) throws(SQLiteError) -> [UInt8] in
                guard try s.step() else { throw SQLiteError(code: 267, message: "item vanished during the transaction", sql: nil) }
                return s.blob(0)
            }
        }
    }

    /// The rows a statement finds; a row that does not even decode (an unknown class or
    /// protection code) is passed over, and reported only when it was all there was.
    func fetch(_ statement: Statement, _ values: [Statement.Value], includeValue: Bool, limit: Int?) throws(StoreError) -> [Row] {
        var rows: [Row] = []
        var failure: StoreError?
        try sql { () throws(SQLiteError) in
            try statement.with(values) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    do throws(StoreError) {
                        rows.append(try readRow(s, includeValue: includeValue))
                    } catch {
                        failure = failure ?? error
                        continue
                    }
                    if let limit, rows.count >= limit { return }
                }
            }
        }
        if rows.isEmpty, let failure { throw failure }
        return rows
    }

    /// The rows matching `query`. Digests narrow the candidates (identity, then scope, then
    /// class); attributes are decrypted only when the query names one the digests do not
    /// cover, or when `needAttributes`; values only when `includeValue`.
    ///
    /// A candidate whose class key is not available here (locked, or bound to another machine)
    /// is passed over, as the Keychain passes over what it cannot decrypt; if nothing matched,
    /// the reason is thrown, so a locked item is never reported as missing.
    func matchingRows(_ query: Query, includeValue: Bool, needAttributes: Bool) throws(StoreError) -> [Row] {
        var unavailable: StoreError?
        let results = try matchingRows(query, includeValue: includeValue, needAttributes: needAttributes, unavailable: &unavailable)
        if results.isEmpty, let unavailable { throw unavailable }
        return results
    }

    func matchingRows(_ query: Query, includeValue: Bool, needAttributes: Bool, unavailable: inout StoreError?) throws(StoreError) -> [Row] {
        let wanted = query.attributes
        var results: [Row] = []
        let present = AttributeField.Mask(present: wanted)
        for itemClass in query.itemClass.map({ [$0] }) ?? ItemClass.allCases {
            let path: VaultSchema.Lookup
            var values: [Statement.Value] = []
            values.reserveCapacity(3)
            var covered = AttributeField.Mask([.accessibility, .accessControl]).bits | AttributeField.dates.bits
            if present.contains(all: RecordCoding.identityMask(itemClass)) {
                path = .identity
                values.append(.blob(try identityDigest(itemClass, wanted)))
                covered |= RecordCoding.identityMask(itemClass).bits
            } else if present.contains(all: RecordCoding.scopeMask(itemClass)) {
                path = .scope
                values.append(.blob(try lookupKey().authenticationCode(RecordCoding.scopeMessage(itemClass, wanted))))
                covered |= RecordCoding.scopeMask(itemClass).bits
            } else {
                path = .itemClass
            }
            values.append(.integer(Int64(itemClass.code)))
            if let accessibility = wanted.accessibility { values.append(.integer(Int64(accessibility.code))) }
            // The digests already matched the covered fields; only the others need the decrypted attributes.
            let uncoveredMask = present.subtracting(AttributeField.Mask(bits: covered))
            let uncovered = uncoveredMask.isEmpty ? [] : uncoveredMask.fields
            // A row found by its scope digest is checked against its attributes: the digest is
            // a column anyone with the file can edit, and a row moved into another scope must
            // never be listed, changed or deleted as part of it. Its authenticated attributes
            // must have the scope asked for, byte for byte (the digest is an HMAC of exactly
            // those bytes, so comparing them says the same as recomputing the HMAC, for none per row).
            let decrypt = needAttributes || !uncovered.isEmpty || path == .scope
            let slot = VaultSchema.select(path, includeValue: includeValue, byProtection: wanted.accessibility != nil, format: Int(header.version))
            let statement = try sql { () throws(SQLiteError) in try connection.statement(slot) }
            let limit = (query.limit == .one && !decrypt) ? 1 : nil
            // Rows are checked and completed where they lie, the kept ones moved to the front:
            // a listing builds thousands, and each copy of a row retains every field it holds.
            var fetched = try fetch(statement, values, includeValue: includeValue, limit: limit)
            let scratch = decrypt && fetched.count > 1 ? LockedScratch() : nil
            var kept = 0
            for index in fetched.indices {
                if let wantedControl = wanted.accessControl, fetched[index].accessControl != wantedControl { continue }
                if decrypt {
                    let attributes: Attributes
                    do {
                        attributes = try decryptAttributes(fetched[index], scratch: scratch)
                    } catch {
                        // Passed over: what this process cannot open, and what is damaged
                        // (one damaged row never stops reads of the others).
                        guard error.isUnavailableKey || error.isDamage else { throw error }
                        unavailable = unavailable ?? error
                        continue
                    }
                    if path == .scope {
                        guard RecordCoding.sameScope(itemClass, attributes, wanted) else {
                            unavailable = unavailable ?? .tampered("an item's scope digest does not match its attributes (moved into another scope)")
                            continue
                        }
                    }
                    if !uncovered.isEmpty {
                        let normalized = attributes.normalizedIdentity(for: itemClass)
                        guard uncovered.allSatisfy({ $0.equal(normalized, wanted) }) else { continue }
                    }
                    fetched[index].attributes = attributes
                }
                if kept != index { fetched.swapAt(kept, index) }
                kept += 1
                if query.limit == .one { break }
            }
            fetched.removeSubrange(kept...)
            if results.isEmpty { results = fetched } else { results.append(contentsOf: fetched) }
            if query.limit == .one, !results.isEmpty { return results }
        }
        return results
    }

    /// The row's attributes, opened and decoded in a locked buffer: `scratch`'s (a listing
    /// passes one for all its rows), or one of their own.
    func decryptAttributes(_ row: Row, scratch: LockedScratch? = nil) throws(StoreError) -> Attributes {
        if let attributes = row.attributes { return attributes }
        // Decoded where they were opened, padding and all: a copy without the padding was a
        // second locked allocation per row.
        func decode(_ bytes: UnsafeRawBufferPointer) throws(StoreError) -> Attributes {
            guard let count = row.generation > 0 ? SizePadding.contentCount(bytes) : bytes.count else { throw .corrupted("an item's padding is malformed") }
            guard var attributes = RecordCoding.decodeAttributes(UnsafeRawBufferPointer(rebasing: bytes[..<count])) else {
                throw .corrupted("an item's attributes do not decode")
            }
            // The protection code is authenticated as associated data, so it is the truth.
            attributes.accessibility = row.accessibility
            attributes.accessControl = row.accessControl
            return attributes
        }
        let key = try classKey(row.accessibility, create: false)
        let plainCount = row.sealedAttributes.count - AESGCM.overhead
        guard plainCount >= 0 else { throw authenticationFailed(.attributes) }
        return try (scratch ?? LockedScratch()).withBuffer(count: plainCount) { (out: UnsafeMutableRawBufferPointer) throws(StoreError) -> Attributes in
            do {
                try key.open(row.sealedAttributes, associatedData: associatedData(row, .attributes), into: out)
            } catch {
                throw authenticationFailed(.attributes)
            }
            return try decode(UnsafeRawBufferPointer(out))
        }
    }

    private func associatedData(_ row: Row, _ part: RecordCoding.Part) -> [UInt8] {
        RecordCoding.itemAssociatedData(
            vaultID: header.vaultID, identity: row.identity, itemClass: row.itemClass,
            protection: RecordCoding.protectionCode(row.accessibility, row.accessControl), part: part,
            generation: row.generation)
    }

    /// A sealed part that did not open: damage, unless another process rotated the keys (a
    /// rekey), which locks this one.
    private func authenticationFailed(_ part: RecordCoding.Part) -> StoreError {
        if (try? dropKeysIfRotated()) == true { return .locked }
        return .tampered("an item's \(part == .value ? "value" : "attributes") failed authentication")
    }

    /// What a row sealed (a value, under its access control's presence seal too), without the
    /// size padding format 2 adds.
    func open(_ sealed: [UInt8], row: Row, part: RecordCoding.Part) throws(StoreError) -> SecretBytes {
        let key = try classKey(row.accessibility, create: false)
        let aad = associatedData(row, part)
        let opened: SecretBytes
        do {
            opened = try key.open(sealed, associatedData: aad)
        } catch {
            throw authenticationFailed(part)
        }
        guard part == .value, let accessControl = row.accessControl else { return try unpadded(opened, row: row) }
        guard let presenceKey, let record = try storedPresenceKey() else {
            presenceNeeded = accessControl
            throw .interactionNotAllowed
        }
        guard let value = PresenceSeal.open(opened, privateKey: presenceKey, publicKey: record.publicKey, associatedData: aad) else {
            throw .tampered("an item's value failed authentication under the presence key")
        }
        return try unpadded(value, row: row)
    }

    /// What a row sealed, without the size padding format 2 adds.
    private func unpadded(_ opened: SecretBytes, row: Row) throws(StoreError) -> SecretBytes {
        guard row.generation > 0 else { return opened }
        guard let content = SizePadding.unpad(opened) else { throw .corrupted("an item's padding is malformed") }
        return content
    }
}
