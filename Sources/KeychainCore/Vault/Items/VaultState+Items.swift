import FoundationEssentials

/// Writes applied to the item table: each row's ledger shard checked, its record sealed
/// (``RowSealing``), written through ``ItemTable``, then counted into the ledger and the journal.
extension VaultState {
    // MARK: - Operations (mutex held)

    func apply(_ operation: WriteOperation, in transaction: inout WriteTransaction) throws(StoreError) -> Int {
        switch operation {
        case .add(let item):
            try checkSize(of: item.value)
            if try row(identity: identity(of: item), includeValue: false) != nil { throw .duplicateItem }
            try insert(item, in: &transaction)
            return 1
        case .upsert(let item):
            try checkSize(of: item.value)
            guard var existing = try row(identity: identity(of: item), includeValue: item.value == nil) else {
                try insert(item, in: &transaction)
                return 1
            }
            let old = try decryptAttributes(existing)
            existing.attributes = old
            try replace(existing, attributes: old.merging(item.attributes), value: item.value, in: &transaction)
            return 1
        case .update(let query, let changes, let value):
            try checkSize(of: value)
            let rows = try matchingRows(query, includeValue: value == nil, needAttributes: true, complete: true)
            guard !rows.isEmpty else { throw .itemNotFound }
            for existing in rows {
                try replace(existing, attributes: (existing.attributes ?? Attributes()).merging(changes), value: value, in: &transaction)
            }
            return rows.count
        case .delete(let query):
            // A synchronizable item's delete travels, addressed by its attributes.
            let rows = try matchingRows(query, includeValue: false, needAttributes: syncEnrolled, complete: true)
            try delete(rows, in: &transaction)
            return rows.count
        }
    }

    /// Deletes `rows`, checking that each was there to delete (``ItemTable/delete(_:)``).
    func delete(_ rows: [ItemRow], in transaction: inout WriteTransaction) throws(StoreError) {
        for row in rows { try verifyLedgerShard(holding: row.identity) }
        try items.delete(rows)
        for row in rows {
            try ledgerRemove(row)
            if let attributes = row.attributes { journal(row.itemClass, attributes, identity: row.identity, deleted: true, in: &transaction) }
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

    /// The identity digest of `attributes`, memoised under the current lookup key (``IdentityMemo``).
    func identityDigest(_ itemClass: ItemClass, _ attributes: Attributes) throws(StoreError) -> [UInt8] {
        try identityMemo.digest(of: IdentityMemoKey(itemClass: itemClass, attributes: attributes), under: try lookupKey()) { (lookup) throws(StoreError) in
            lookup.authenticationCode(RecordCoding.identityMessage(itemClass, attributes))
        }
    }

    func insert(_ item: Item, in transaction: inout WriteTransaction) throws(StoreError) {
        var attributes = item.attributes.normalizedIdentity(for: item.itemClass)
        attributes.accessibility = attributes.accessibility ?? .whenUnlocked
        let now = Date()
        attributes.creationDate = now
        attributes.modificationDate = now
        let sealed = try seal(item.itemClass, attributes: attributes, value: item.value, generation: transaction.generation)
        try verifyLedgerShard(holding: sealed.identity)
        let id = try items.insert(
            item.itemClass, protection: RecordCoding.protectionCode(attributes.accessibility!, attributes.accessControl), sealed: sealed,
            generation: transaction.generation)
        try ledgerInsert(id: id, itemClass: item.itemClass, identity: sealed.identity, scope: sealed.scope, generation: transaction.generation)
        journal(item.itemClass, attributes, identity: sealed.identity, deleted: false, in: &transaction)
    }

    /// Re-seals an existing row with new attributes (and value, or its old one), checking that
    /// a changed identity does not collide with another item.
    func replace(_ existing: ItemRow, attributes: Attributes, value: SecretBytes?, in transaction: inout WriteTransaction) throws(StoreError) {
        var attributes = attributes.normalizedIdentity(for: existing.itemClass)
        attributes.accessibility = attributes.accessibility ?? existing.accessibility
        attributes.accessControl = attributes.accessControl ?? existing.accessControl
        attributes.creationDate = existing.attributes?.creationDate ?? attributes.creationDate ?? Date()
        attributes.modificationDate = Date()
        let plaintext: SecretBytes
        if let value {
            plaintext = value
        } else if isCarriedOver(existing) {
            // Re-sealed as current, an older copy's value would become the item's value.
            throw carriedRowRefused
        } else if let sealed = existing.value {
            plaintext = try open(sealed, row: existing, part: .value)
        } else {
            plaintext = try open(try items.sealedValue(of: existing), row: existing, part: .value)
        }
        let sealed = try seal(existing.itemClass, attributes: attributes, value: plaintext, generation: transaction.generation)
        if sealed.identity != existing.identity, try row(identity: sealed.identity, includeValue: false) != nil {
            throw .duplicateItem
        }
        try overwrite(
            existing, protection: RecordCoding.protectionCode(attributes.accessibility!, attributes.accessControl), with: sealed,
            missing: "an update did not change the row it matched", generation: transaction.generation)
        if sealed.identity != existing.identity, let old = existing.attributes {
            journal(existing.itemClass, old.normalizedIdentity(for: existing.itemClass), identity: existing.identity, deleted: true, in: &transaction)
        } else if let old = existing.attributes, old.mayLeave(by: .sync), !attributes.mayLeave(by: .sync) {
            // Made ThisDeviceOnly or put behind a proof: it leaves the other devices.
            journal(existing.itemClass, old.normalizedIdentity(for: existing.itemClass), identity: existing.identity, deleted: true, in: &transaction)
        }
        journal(existing.itemClass, attributes, identity: sealed.identity, deleted: false, in: &transaction)
    }

    /// Writes `sealed` over `row`, at the write's `generation` (``ItemTable/overwrite(_:protection:with:generation:missing:)``),
    /// its ledger shards checked before and the ledger counting it after.
    func overwrite(_ row: ItemRow, protection: UInt8, with sealed: SealedRecord, missing: String, generation: UInt64) throws(StoreError) {
        try verifyLedgerShard(holding: row.identity)
        try verifyLedgerShard(holding: sealed.identity)
        try items.overwrite(row, protection: protection, with: sealed, generation: generation, missing: missing)
        try ledgerRemove(row)
        try ledgerInsert(id: row.id, itemClass: row.itemClass, identity: sealed.identity, scope: sealed.scope, generation: generation)
    }

    /// The record of an item sealed at `generation` (``RowSealing``), under its class key and the digests of the lookup key.
    func seal(_ itemClass: ItemClass, attributes: Attributes, value: SecretBytes?, generation: UInt64) throws(StoreError) -> SealedRecord {
        let accessibility = attributes.accessibility!
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
        let sealing = sealing
        return try Self.crypto { () throws(OpenSSLError) -> SealedRecord in
            try sealing.seal(
                itemClass, attributes: attributes, value: value, identity: identity, scope: scope, generation: generation, key: key,
                presencePublicKey: presencePublicKey)
        }
    }
}
