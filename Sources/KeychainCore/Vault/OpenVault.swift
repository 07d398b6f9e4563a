import FoundationEssentials
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// An existing vault file, open: the key bag, the item table and the lock state over one
/// SQLite connection. ``Vault`` is the public face over it, and the only place a vault file
/// is created (``create(_:)``); this type only ever opens files that exist, after checking
/// their owner, type, mode and schema.
///
/// Key hierarchy, after Apple's Data Protection: a random master key, wrapped by the vault key
/// (from a passphrase through scrypt, or from a random key file beside the vault when there is
/// no passphrase); a random key per accessibility class, wrapped by a key derived from the
/// master key (bound to the machine for ThisDeviceOnly classes).
///
/// Every method is thread-safe and atomic. Several processes may share one vault: writes take
/// SQLite's write lock (`BEGIN IMMEDIATE`) and wait for each other.
final class OpenVault: @unchecked Sendable {
    /// How this vault was opened.
    let configuration: VaultConfiguration
    /// Where the vault lives.
    var location: VaultLocation { configuration.location }

    // All mutable state below is guarded by `mutex`; SQLite runs in multi-thread mode and relies on it.
    let mutex = Lock()
    let connection: Connection
    var header: VaultHeader
    var keys = KeyRing()
    private var lastUse = ContinuousClock.now
    private var idleTimer: DispatchSourceTimer?
    private var kernelKeyringState: VaultStatus.KernelKeyringState?
    let kernelKeyring = KernelKeyring()
    /// Read on first need: only ThisDeviceOnly classes use it, and most opens touch none.
    private lazy var machineID: [UInt8]? = configuration.machineIdentity.read()
    var identityMemo: [IdentityMemoKey: [UInt8]] = [:]
    /// The unwrapped presence private key for the read in progress (set and cleared under `mutex`).
    var presenceKey: SecretBytes?
    /// The access control of the item a read found it could not open without a proof.
    private var presenceNeeded: AccessControl?

    /// Opens the existing vault at the configuration's location.
    ///
    /// - Throws: ``StoreError/untrusted(path:reason:)`` or ``StoreError/insecurePermissions(path:)``
    ///   for files another user owns or may change, or that are links; ``StoreError/corrupted(_:)``
    ///   for a file that is not a vault (empty, truncated, another database);
    ///   ``StoreError/tampered(_:)`` for a vault whose schema was altered (a trigger, a view...);
    ///   ``StoreError/unsupportedFormatVersion(_:)``; ``StoreError/io(_:)`` for file-system failures.
    init(_ configuration: VaultConfiguration) throws(StoreError) {
        self.configuration = configuration
        let location = configuration.location
        try VaultFile.checkAll(location)
        do {
            connection = try Connection(path: location.path, create: false)
        } catch {
            throw Self.map(error, path: location.path)
        }
        try VaultSchema.check(connection, path: location.path)
        guard let bytes = try Self.storedHeader(in: connection) else {
            throw .corrupted("\(location.path) has a vault's tables but no header")
        }
        header = try VaultHeader.decode(bytes)
    }

    deinit {
        idleTimer?.cancel()
    }

    // MARK: - Lock state

    /// Unlocks a vault protected by a passphrase: whenUnlocked classes become readable in this
    /// process, and afterFirstUnlock classes in every process of the user until reboot (through
    /// the kernel keyring, where it works). A vault without a passphrase is always unlocked and
    /// this does nothing.
    ///
    /// - Throws: ``StoreError/wrongPassphrase`` (nothing changes), ``StoreError/tampered(_:)``
    ///   if a wrapped key fails verification.
    func unlock(passphrase: SecretBytes) throws(StoreError) {
        try withState { () throws(StoreError) in
            try refreshHeader()
            guard case .passphrase = header.protection else { return }
            let (master, passphraseKey) = try openMasterKey(passphrase: passphrase)
            try adopt(master: master)
            // Best effort: a read-only vault still unlocks; it just cannot take presence items yet.
            // A presence record that fails its upgrade is left as it is: writes then refuse it.
            if let passphraseKey {
                try? createPresenceKeyIfMissing(passphraseKey: passphraseKey)
                try? upgradePresenceRecord(passphraseKey: passphraseKey)
            }
            try loadExistingClassKeys()
            publishToKernelKeyring()
            startIdleTimer()
        }
    }

    /// Locks the vault in this process: the master key and the whenUnlocked class keys are wiped
    /// from memory. afterFirstUnlock items stay readable until reboot, as on iOS; see
    /// ``forgetCachedKeys()``. A vault without a passphrase unlocks itself again on next use.
    func lock() {
        mutex.withLock {
            lockKeys()
            // As a locked device: whenUnlocked items close for every process of the user.
            if configuration.usesKernelKeyring { kernelKeyring.remove(unlockedDescription) }
        }
    }

    /// Locks the vault and also drops the afterFirstUnlock keys, from this process and from the
    /// kernel keyring: as after a reboot, only the passphrase opens the vault again.
    func forgetCachedKeys() {
        mutex.withLock {
            lockKeys()
            keys.wipeAll()
            if configuration.usesKernelKeyring {
                kernelKeyring.remove(cacheDescription)
                kernelKeyring.remove(unlockedDescription)
            }
        }
    }

    /// Sets, changes or removes the passphrase without re-encrypting any item: only the master
    /// key is re-wrapped, in one transaction.
    ///
    /// - Parameters:
    ///   - current: the current passphrase; ignored when the vault has none.
    ///   - new: the new passphrase, or nil to remove it (the vault then uses a key file, and
    ///     every whenPasscodeSetThisDeviceOnly item is destroyed, as on iOS).
    /// - Throws: ``StoreError/wrongPassphrase`` if `current` is wrong (nothing changes),
    ///   ``StoreError/invalidArgument(_:)`` for an empty new passphrase.
    func changePassphrase(from current: SecretBytes?, to new: SecretBytes?) throws(StoreError) {
        if let new, new.count == 0 { throw .invalidArgument("the new passphrase is empty") }
        try withState { () throws(StoreError) in
            try refreshHeader()
            let master: SecretBytes
            var currentPassphraseKey: SecretBytes?
            let hadPassphrase = header.hasPassphrase
            if hadPassphrase {
                guard let current else { throw .wrongPassphrase }
                (master, currentPassphraseKey) = try openMasterKey(passphrase: current)
            } else {
                if new == nil { return }
                master = try masterKeyFromKeyFile()
            }
            var replacement = VaultHeader(version: header.version, vaultID: header.vaultID, protection: .keyFile)
            let wrappingKey: SecretBytes
            if let new {
                let salt = Random.bytes(VaultHeader.saltSize)
                replacement.protection = .passphrase(configuration.scryptParameters, salt: salt)
                wrappingKey = try Self.crypto { () throws(OpenSSLError) in
                    try Scrypt.deriveKey(passphrase: new, salt: salt, parameters: configuration.scryptParameters)
                }
            } else {
                wrappingKey = SecretBytes.random(count: 32)
            }
            replacement.wrappedMasterKey = try Self.crypto { () throws(OpenSSLError) in
                try AESGCM.seal(master, key: wrappingKey, associatedData: RecordCoding.masterKeyAssociatedData(replacement))
            }
            // The lookup key (derived from the master key, which does not change) tags the presence public key.
            try adopt(master: master)
            let presenceRecord = try new == nil ? nil : rewrappedPresenceKey(from: currentPassphraseKey, to: wrappingKey)
            try writeTransaction { () throws(StoreError) in
                if let presenceRecord {
                    try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(presenceRecord.encoded())]) }
                }
                if new == nil {
                    // Written before the header that needs it; if the commit fails, the old
                    // header (passphrase) still stands and the stray key file is unused.
                    guard try VaultFile.createExclusively(wrappingKey, at: location.keyFilePath) else {
                        throw .untrusted(path: location.keyFilePath, reason: "a key file is already there (an old copy?); move it away, then remove the passphrase again")
                    }
                    let code = Int64(Accessibility.whenPasscodeSetThisDeviceOnly.code)
                    // As on iOS, removing the passcode destroys what needed it: the passcode class
                    // and every item behind a proof of presence, with the presence key pair.
                    try sql { () throws(SQLiteError) in
                        try connection.statement(VaultSchema.deleteProtection).run([.integer(code)])
                        try connection.statement(VaultSchema.deleteClassKey).run([.integer(code)])
                        try connection.statement(VaultSchema.deletePresenceItems).run([])
                        try connection.statement(VaultSchema.deletePresenceKey).run([])
                    }
                }
                try sql { () throws(SQLiteError) in
                    try connection.statement(VaultSchema.writeHeader).run([.blob(replacement.encoded())])
                }
            }
            header = replacement
            // Overwritten before it is unlinked: the old key must not stay readable on disk.
            if new != nil && !hadPassphrase { VaultFile.destroy(location.keyFilePath) }
            if new == nil { keys.classes[.whenPasscodeSetThisDeviceOnly] = nil }
            if let new {
                try loadExistingClassKeys()
                // A key-file vault's first passphrase brings new keys: a copy of the old key
                // file (with an old copy of the header) must open nothing written from now on.
                if !hadPassphrase { try rotateKeys(passphrase: new, currentPassphraseKey: wrappingKey) }
                publishToKernelKeyring()
                startIdleTimer()
            }
        }
    }

    /// True once the vault has a passphrase and a presence key pair (made at the first unlock).
    var supportsAccessControl: Bool {
        mutex.withLock {
            try? refreshHeader()
            return header.hasPassphrase && (try? storedPresenceKey()) != nil
        }
    }

    /// Whether the vault is protected by a passphrase (read from its header as last seen).
    var hasPassphrase: Bool {
        mutex.withLock { header.hasPassphrase }
    }

    /// Where the vault is, whether it is locked, and which classes are available now.
    func status() -> VaultStatus {
        mutex.withLock {
            try? refreshHeader()
            try? loadImplicitKeys()
            let available = Accessibility.allCases.filter { classAvailable($0) }
            let count = (try? connection.statement(VaultSchema.countItems).with([]) { (s: Statement) throws(SQLiteError) -> Int in
                _ = try s.step()
                return Int(s.integer(0))
            }) ?? 0
            return VaultStatus(
                location: location, exists: true,
                formatVersion: Int(header.version),
                hasPassphrase: header.hasPassphrase,
                isUnlocked: keys.master != nil || keys.classes[.whenUnlocked] != nil,
                userUnlockRemaining: usesUserUnlock ? kernelKeyring.remaining(unlockedDescription) : nil,
                availableClasses: available,
                kernelKeyring: currentKernelKeyringState(),
                machineBinding: machineID == nil ? "no machine id (/etc/machine-id): ThisDeviceOnly classes are unavailable" : nil,
                itemCount: count)
        }
    }

    /// Writes one consistent snapshot of the whole vault, what its WAL holds included, into the
    /// empty file at `path` (SQLite's `VACUUM INTO`), while other connections go on.
    func snapshot(into path: String) throws(StoreError) {
        try withState { () throws(StoreError) in
            try sql { () throws(SQLiteError) in try connection.statement("VACUUM INTO ?").run([.text(path)]) }
        }
    }

    /// Runs SQLite's full integrity check of the vault file (every page, index and row).
    /// - Throws: ``StoreError/corrupted(_:)`` with SQLite's first complaint when it fails.
    func verifyIntegrity() throws(StoreError) {
        let report = try withState { () throws(StoreError) -> String in
            try sql { () throws(SQLiteError) -> String in
                try connection.statement("PRAGMA integrity_check").with([]) { (s: Statement) throws(SQLiteError) -> String in
                    try s.step() ? s.text(0) : "no answer"
                }
            }
        }
        guard report == "ok" else { throw .corrupted("integrity check: \(report)") }
    }

    // MARK: - Store

    func isAvailable(_ accessibility: Accessibility) -> Bool {
        mutex.withLock {
            touch()
            try? loadImplicitKeys()
            return classAvailable(accessibility)
        }
    }

    /// Finds items; with `returnData`, values behind an ``AccessControl`` are decrypted only
    /// after the query's ``AuthenticationContext`` (or the default authenticator) gives the
    /// proof, asked for once per call, outside the vault's lock.
    ///
    /// - Throws: ``StoreError/userCancelled``, ``StoreError/authenticationFailed`` or
    ///   ``StoreError/interactionNotAllowed`` for such values, besides the usual errors.
    func copyMatching(_ query: Query) throws(StoreError) -> [Item] {
        try query.validate()
        var proof: SecretBytes?
        while true {
            var needed: AccessControl?
            do throws(StoreError) {
                return try withState { () throws(StoreError) -> [Item] in
                    presenceKey = proof ?? query.authentication?.key(for: header.vaultID)
                    presenceNeeded = nil
                    defer { presenceKey = nil }
                    do throws(StoreError) {
                        return try copyMatchingLocked(query)
                    } catch .interactionNotAllowed {
                        needed = presenceNeeded
                        throw .interactionNotAllowed
                    }
                }
            } catch .interactionNotAllowed {
                guard proof == nil, let needed else { throw .interactionNotAllowed }
                proof = try presenceProof(for: needed, context: query.authentication ?? AuthenticationContext())
            }
        }
    }

    private func copyMatchingLocked(_ query: Query) throws(StoreError) -> [Item] {
        let rows = try matchingRows(query, includeValue: query.returnData, needAttributes: query.returnAttributes)
        guard !rows.isEmpty else { throw .itemNotFound }
        var items: [Item] = []
        items.reserveCapacity(rows.count)
        var damaged: StoreError?
        for row in rows {
            var item: Item
            if let attributes = row.attributes {
                item = Item(row.itemClass, attributes: attributes)
            } else {
                var named = query.attributes
                named.accessibility = row.accessibility
                item = Item(row.itemClass, attributes: named)
            }
            if query.returnData, let sealed = row.value {
                do {
                    item.value = try open(sealed, row: row, part: .value)
                } catch {
                    // One damaged item never hides the others; alone, it is reported.
                    guard error.isDamage, rows.count > 1 else { throw error }
                    damaged = damaged ?? error
                    continue
                }
            }
            items.append(item)
        }
        if items.isEmpty, let damaged { throw damaged }
        return items
    }

    // MARK: - Presence (access control)

    /// Asks the context's authenticator for the passphrase and unwraps the presence private
    /// key with it; scrypt runs outside the vault's lock.
    private func presenceProof(for accessControl: AccessControl, context: AuthenticationContext) throws(StoreError) -> SecretBytes {
        guard !context.interactionNotAllowed else { throw .interactionNotAllowed }
        if accessControl.needsBiometry && !context.authenticator.offersBiometry {
            throw .unavailable("this item needs a biometric proof (\(accessControl)) and the authenticator offers none")
        }
        let request = PresenceRequest(reason: context.localizedReason, accessControl: accessControl, vaultPath: location.path)
        let passphrase: SecretBytes
        do {
            passphrase = try context.authenticator.authenticate(request)
        } catch {
            switch error {
            case .cancelled: throw .userCancelled
            case .unavailable(let why): throw .unavailable(why)
            }
        }
        let (protection, record, vaultID) = try withState { () throws(StoreError) -> (VaultHeader.Protection, PresenceKeyRecord?, [UInt8]) in
            try refreshHeader()
            return (header.protection, try storedPresenceKey(), header.vaultID)
        }
        guard case .passphrase(let parameters, let salt) = protection, let record else { throw .passphraseRequired }
        let privateKey = try Self.crypto { () throws(OpenSSLError) -> SecretBytes? in
            let wrapping = try PresenceKeyRecord.wrappingKey(passphraseKey: Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters))
            return try? AESGCM.open(record.wrappedPrivateKey, key: wrapping,
                                    associatedData: PresenceKeyRecord.wrappingAssociatedData(vaultID: vaultID, publicKey: record.publicKey))
        }
        guard let privateKey else { throw .authenticationFailed }
        context.keep(privateKey, for: vaultID)
        return privateKey
    }

    func storedPresenceKey() throws(StoreError) -> PresenceKeyRecord? {
        let bytes = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readPresenceKey).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in
                try s.step() ? s.blob(0) : nil
            }
        }
        guard let bytes else { return nil }
        guard let record = PresenceKeyRecord.decode(bytes) else { throw .corrupted("the presence key record does not decode") }
        return record
    }

    /// The presence public key writers seal to, checked against its tag under a key derived
    /// from the master key: only a process that unlocked with the passphrase can vouch for it,
    /// never one holding only cached keys (which a same-user process may have planted or read).
    private func trustedPresencePublicKey() throws(StoreError) -> [UInt8] {
        guard header.hasPassphrase else { throw .passphraseRequired }
        guard let master = keys.master else { throw .locked }
        guard let record = try storedPresenceKey() else {
            throw .unavailable("the vault has no presence key yet: unlock it with its passphrase once")
        }
        guard record.recordVersion == PresenceKeyRecord.version else {
            throw .unavailable("the vault's presence key predates its current protection: unlock it with its passphrase to upgrade it")
        }
        let expected = try Self.crypto { () throws(OpenSSLError) in try PresenceKeyRecord.tagKey(master: master) }
            .authenticationCode(PresenceKeyRecord.tagMessage(record.publicKey))
        guard Digest.equal(expected, record.publicKeyTag) else { throw .tampered("the presence public key failed verification") }
        return record.publicKey
    }

    /// Re-tags a version 1 presence record under the master-derived key, once its wrapped
    /// private key is proven to open with the passphrase and to match the public key (a
    /// swapped-in public key, tagged by someone who had only the cached lookup key, fails here).
    private func upgradePresenceRecord(passphraseKey: SecretBytes) throws(StoreError) {
        guard let record = try storedPresenceKey(), record.recordVersion < PresenceKeyRecord.version, let master = keys.master else { return }
        let vaultID = header.vaultID
        let wrapping = try Self.crypto { () throws(OpenSSLError) in try PresenceKeyRecord.wrappingKey(passphraseKey: passphraseKey) }
        guard let privateKey = try? AESGCM.open(record.wrappedPrivateKey, key: wrapping,
                                                associatedData: PresenceKeyRecord.wrappingAssociatedData(vaultID: vaultID, publicKey: record.publicKey)),
              let derived = try? X25519.publicKey(privateKey: privateKey), Digest.equal(derived, record.publicKey)
        else { throw .tampered("the presence key record does not hold a key pair the passphrase opens") }
        let tag = try Self.crypto { () throws(OpenSSLError) in try PresenceKeyRecord.tagKey(master: master) }
            .authenticationCode(PresenceKeyRecord.tagMessage(record.publicKey))
        let upgraded = PresenceKeyRecord(publicKey: record.publicKey, publicKeyTag: tag, wrappedPrivateKey: record.wrappedPrivateKey)
        try writeTransaction { () throws(StoreError) in
            try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(upgraded.encoded())]) }
        }
    }

    private func createPresenceKeyIfMissing(passphraseKey: SecretBytes) throws(StoreError) {
        guard try storedPresenceKey() == nil else { return }
        let record = try rewrappedPresenceKey(from: nil, to: passphraseKey)
        try writeTransaction { () throws(StoreError) in
            guard try storedPresenceKey() == nil else { return }
            try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writePresenceKey).run([.blob(record.encoded())]) }
        }
    }

    /// The presence key pair wrapped for the passphrase whose scrypt output is `newKey`: the
    /// existing pair, unwrapped with `currentKey`, or a new pair when there is none.
    private func rewrappedPresenceKey(from currentKey: SecretBytes?, to newKey: SecretBytes) throws(StoreError) -> PresenceKeyRecord {
        let vaultID = header.vaultID
        var pair: (privateKey: SecretBytes, publicKey: [UInt8])?
        if let currentKey, let existing = try storedPresenceKey() {
            let wrapping = try Self.crypto { () throws(OpenSSLError) in try PresenceKeyRecord.wrappingKey(passphraseKey: currentKey) }
            guard let privateKey = try? AESGCM.open(existing.wrappedPrivateKey, key: wrapping,
                                                    associatedData: PresenceKeyRecord.wrappingAssociatedData(vaultID: vaultID, publicKey: existing.publicKey))
            else { throw .tampered("the presence private key does not open with the passphrase that opens the vault") }
            guard let derived = try? X25519.publicKey(privateKey: privateKey), Digest.equal(derived, existing.publicKey) else {
                throw .tampered("the presence key record does not hold a matching key pair")
            }
            pair = (privateKey, existing.publicKey)
        }
        guard let master = keys.master else { throw .locked }
        return try Self.crypto { () throws(OpenSSLError) -> PresenceKeyRecord in
            let (privateKey, publicKey) = if let pair { pair } else { try X25519.generate() }
            let wrapped = try AESGCM.seal(privateKey, key: PresenceKeyRecord.wrappingKey(passphraseKey: newKey),
                                          associatedData: PresenceKeyRecord.wrappingAssociatedData(vaultID: vaultID, publicKey: publicKey))
            let tag = try PresenceKeyRecord.tagKey(master: master).authenticationCode(PresenceKeyRecord.tagMessage(publicKey))
            return PresenceKeyRecord(publicKey: publicKey, publicKeyTag: tag, wrappedPrivateKey: wrapped)
        }
    }

    /// Whether an item matches, without decrypting any value (and any attribute the digests cover).
    func contains(_ query: Query) throws(StoreError) -> Bool {
        try query.validate()
        return try withState { () throws(StoreError) -> Bool in
            var one = query
            one.limit = .one
            return try !matchingRows(one, includeValue: false, needAttributes: false).isEmpty
        }
    }

    @discardableResult
    func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteResult {
        for operation in operations { try operation.validate() }
        return try withState { () throws(StoreError) -> WriteResult in
            // Keys another process rotated since this one took them must not seal anything.
            if try dropKeysIfRotated() { throw .locked }
            return try writeTransaction { () throws(StoreError) -> WriteResult in
                var counts: [Int] = []
                for operation in operations {
                    counts.append(try apply(operation))
                }
                return WriteResult(counts: counts)
            }
        }
    }

    // MARK: - Operations (mutex held)

    private func apply(_ operation: WriteOperation) throws(StoreError) -> Int {
        switch operation {
        case .add(let item):
            try validate(item)
            if try row(identity: identity(of: item), includeValue: false) != nil { throw .duplicateItem }
            try insert(item)
            return 1
        case .upsert(let item):
            try validate(item)
            guard let existing = try row(identity: identity(of: item), includeValue: item.value == nil) else {
                try insert(item)
                return 1
            }
            let old = try decryptAttributes(existing)
            try replace(existing, attributes: old.merging(item.attributes), value: item.value)
            return 1
        case .update(let query, let changes, let value):
            if let value, value.count > configuration.maximumValueSize { throw .valueTooLarge(limit: configuration.maximumValueSize) }
            let rows = try matchingRows(query, includeValue: value == nil, needAttributes: true)
            guard !rows.isEmpty else { throw .itemNotFound }
            for existing in rows {
                try replace(existing, attributes: (existing.attributes ?? Attributes()).merging(changes), value: value)
            }
            return rows.count
        case .delete(let query):
            let rows = try matchingRows(query, includeValue: false, needAttributes: false)
            let changed = try sql { () throws(SQLiteError) -> Int in
                let statement = try connection.statement(VaultSchema.deleteItem)
                var changed = 0
                for row in rows { changed += try statement.runCountingChanges([.integer(row.id)]) }
                return changed
            }
            guard changed == rows.count else { throw .tampered("a delete did not remove the rows it matched") }
            return rows.count
        }
    }

    private func validate(_ item: Item) throws(StoreError) {
        if let value = item.value, value.count > configuration.maximumValueSize {
            throw .valueTooLarge(limit: configuration.maximumValueSize)
        }
    }

    private func identity(of item: Item) throws(StoreError) -> [UInt8] {
        try identityDigest(item.itemClass, item.attributes)
    }

    /// The identity digest of `attributes`, memoised: a program reads the same few items again
    /// and again, and encoding plus HMAC is a third of a read. The digests are not secret (the
    /// table stores them) and the lookup key never changes for a vault, so entries stay valid;
    /// the memo is bounded and dropped whole when full.
    private func identityDigest(_ itemClass: ItemClass, _ attributes: Attributes) throws(StoreError) -> [UInt8] {
        let key = IdentityMemoKey(itemClass: itemClass, attributes: attributes)
        if let digest = identityMemo[key] { return digest }
        let digest = try lookupKey().authenticationCode(RecordCoding.identityMessage(itemClass, attributes))
        if identityMemo.count >= 1_024 { identityMemo.removeAll(keepingCapacity: true) }
        identityMemo[key] = digest
        return digest
    }

    private func insert(_ item: Item) throws(StoreError) {
        var attributes = item.attributes.normalizedIdentity(for: item.itemClass)
        attributes.accessibility = attributes.accessibility ?? .whenUnlocked
        let now = Date()
        attributes.creationDate = now
        attributes.modificationDate = now
        let sealed = try seal(item.itemClass, attributes: attributes, value: item.value)
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.insertItem).run([
                .integer(Int64(item.itemClass.code)), .integer(Int64(RecordCoding.protectionCode(attributes.accessibility!, attributes.accessControl))),
                .blob(sealed.identity), .blob(sealed.scope), .blob(sealed.attributes), .blob(sealed.value),
            ])
        }
    }

    /// Re-seals an existing row with new attributes (and value, or its old one), checking that
    /// a changed identity does not collide with another item.
    private func replace(_ existing: Row, attributes: Attributes, value: SecretBytes?) throws(StoreError) {
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
        let changed = try sql { () throws(SQLiteError) -> Int in
            try connection.statement(VaultSchema.replaceItem).runCountingChanges([
                .integer(Int64(RecordCoding.protectionCode(attributes.accessibility!, attributes.accessControl))), .blob(sealed.identity), .blob(sealed.scope),
                .blob(sealed.attributes), .blob(sealed.value), .integer(existing.id),
            ])
        }
        guard changed == 1 else { throw .tampered("an update did not change the row it matched") }
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
        let plainAttributes = RecordCoding.encode(attributes)
        return try Self.crypto { () throws(OpenSSLError) -> SealedRecord in
            let sealedAttributes = try plainAttributes.withBytes { (p: UnsafeRawBufferPointer) throws(OpenSSLError) in
                try key.seal(p, associatedData: RecordCoding.itemAssociatedData(
                    vaultID: vaultID, identity: identity, itemClass: itemClass, protection: protection, part: .attributes))
            }
            let valueAAD = RecordCoding.itemAssociatedData(vaultID: vaultID, identity: identity, itemClass: itemClass, protection: protection, part: .value)
            let sealedValue: [UInt8]
            if let presencePublicKey {
                let inner = try PresenceSeal.seal(value ?? SecretBytes([]), to: presencePublicKey, associatedData: valueAAD)
                sealedValue = try key.seal(inner, associatedData: valueAAD)
            } else if let value {
                sealedValue = try key.seal(value, associatedData: valueAAD)
            } else {
                sealedValue = try key.seal(UnsafeRawBufferPointer(start: nil, count: 0), associatedData: valueAAD)
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
        var attributes: Attributes?
    }

    func readRow(_ s: Statement, includeValue: Bool) throws(StoreError) -> Row {
        guard let itemClass = ItemClass(code: UInt8(truncatingIfNeeded: s.integer(1))),
              let (accessibility, accessControl) = RecordCoding.protection(code: UInt8(truncatingIfNeeded: s.integer(2)))
        else { throw .corrupted("an item has an unknown class or protection code") }
        return Row(id: s.integer(0), itemClass: itemClass, accessibility: accessibility, accessControl: accessControl, identity: s.blob(3),
                   sealedAttributes: s.blob(4), value: includeValue ? s.blob(5) : nil)
    }

    private func row(identity: [UInt8], includeValue: Bool) throws(StoreError) -> Row? {
        let statement = try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.selectByIdentity) }
        return try fetch(statement, [.blob(identity)], includeValue: includeValue, limit: 1).first
    }

    private func sealedValue(of row: Row) throws(StoreError) -> [UInt8] {
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
    private func matchingRows(_ query: Query, includeValue: Bool, needAttributes: Bool) throws(StoreError) -> [Row] {
        var unavailable: StoreError?
        let results = try matchingRows(query, includeValue: includeValue, needAttributes: needAttributes, unavailable: &unavailable)
        if results.isEmpty, let unavailable { throw unavailable }
        return results
    }

    private func matchingRows(_ query: Query, includeValue: Bool, needAttributes: Bool, unavailable: inout StoreError?) throws(StoreError) -> [Row] {
        let wanted = query.attributes
        var results: [Row] = []
        let present = AttributeField.Mask(present: wanted)
        for itemClass in query.itemClass.map({ [$0] }) ?? ItemClass.allCases {
            let path: VaultSchema.Lookup
            var values: [Statement.Value]
            var covered = AttributeField.Mask([.accessibility, .accessControl]).bits | AttributeField.dates.bits
            if present.contains(all: RecordCoding.identityMask(itemClass)) {
                path = .identity
                values = [.blob(try identityDigest(itemClass, wanted))]
                covered |= RecordCoding.identityMask(itemClass).bits
            } else if present.contains(all: RecordCoding.scopeMask(itemClass)) {
                path = .scope
                values = [.blob(try lookupKey().authenticationCode(RecordCoding.scopeMessage(itemClass, wanted)))]
                covered |= RecordCoding.scopeMask(itemClass).bits
            } else {
                path = .itemClass
                values = []
            }
            values.append(.integer(Int64(itemClass.code)))
            if let accessibility = wanted.accessibility { values.append(.integer(Int64(accessibility.code))) }
            // The digests already matched the covered fields; only the others need the decrypted attributes.
            let uncoveredMask = present.subtracting(AttributeField.Mask(bits: covered))
            let uncovered = uncoveredMask.isEmpty ? [] : uncoveredMask.fields
            let decrypt = needAttributes || !uncovered.isEmpty
            let sqlText = VaultSchema.select(path, includeValue: includeValue, byProtection: wanted.accessibility != nil)
            let statement = try sql { () throws(SQLiteError) in try connection.statement(sqlText) }
            let limit = (query.limit == .one && !decrypt) ? 1 : nil
            for var row in try fetch(statement, values, includeValue: includeValue, limit: limit) {
                if let wantedControl = wanted.accessControl, row.accessControl != wantedControl { continue }
                if decrypt {
                    let attributes: Attributes
                    do {
                        attributes = try decryptAttributes(row)
                    } catch {
                        // Passed over: what this process cannot open, and what is damaged
                        // (one damaged row never stops reads of the others).
                        guard error.isUnavailableKey || error.isDamage else { throw error }
                        unavailable = unavailable ?? error
                        continue
                    }
                    if !uncovered.isEmpty {
                        let normalized = attributes.normalizedIdentity(for: itemClass)
                        guard uncovered.allSatisfy({ $0.equal(normalized, wanted) }) else { continue }
                    }
                    row.attributes = attributes
                }
                results.append(row)
                if query.limit == .one { return results }
            }
        }
        return results
    }

    func decryptAttributes(_ row: Row) throws(StoreError) -> Attributes {
        if let attributes = row.attributes { return attributes }
        let plaintext = try open(row.sealedAttributes, row: row, part: .attributes)
        guard var attributes = plaintext.withUnsafeBytes({ RecordCoding.decodeAttributes($0) }) else {
            throw .corrupted("an item's attributes do not decode")
        }
        // The protection code is authenticated as associated data, so it is the truth.
        attributes.accessibility = row.accessibility
        attributes.accessControl = row.accessControl
        return attributes
    }

    func open(_ sealed: [UInt8], row: Row, part: RecordCoding.Part) throws(StoreError) -> SecretBytes {
        let key = try classKey(row.accessibility, create: false)
        let aad = RecordCoding.itemAssociatedData(vaultID: header.vaultID, identity: row.identity, itemClass: row.itemClass,
                                                  protection: RecordCoding.protectionCode(row.accessibility, row.accessControl), part: part)
        let opened: SecretBytes
        do {
            opened = try key.open(sealed, associatedData: aad)
        } catch {
            // Keys rotated by another process (a rekey) are not damage: this process is locked.
            if (try? dropKeysIfRotated()) == true { throw .locked }
            throw .tampered("an item's \(part == .value ? "value" : "attributes") failed authentication")
        }
        guard part == .value, let accessControl = row.accessControl else { return opened }
        guard let presenceKey, let record = try storedPresenceKey() else {
            presenceNeeded = accessControl
            throw .interactionNotAllowed
        }
        guard let value = PresenceSeal.open(opened, privateKey: presenceKey, publicKey: record.publicKey, associatedData: aad) else {
            throw .tampered("an item's value failed authentication under the presence key")
        }
        return value
    }

    // MARK: - Keys (mutex held)

    /// The user's unlocked state: the whenUnlocked class keys, in the kernel keyring with an
    /// idle timeout, for every process of the user (``VaultConfiguration/userUnlockTimeout``).
    var unlockedDescription: String { cacheDescription + ":unlocked" }

    private var usesUserUnlock: Bool { configuration.usesKernelKeyring && configuration.userUnlockTimeout != nil && header.hasPassphrase }

    private var userUnlockSeconds: UInt32 {
        guard let timeout = configuration.userUnlockTimeout else { return 0 }
        return UInt32(clamping: max(timeout.components.seconds, 1))
    }

    /// Whether this process holds whenUnlocked keys only through the user's unlocked state (not
    /// its own passphrase), and when that state was last confirmed.
    var heldThroughUserUnlock = false
    /// The idle timeout the unlocking process chose, which every use keeps (not the reader's own).
    private var heldUnlockTimeout: UInt32 = 1
    private var userUnlockConfirmed = ContinuousClock.now

    /// The user's unlocked state as stored: the idle timeout (4 bytes, big-endian), then the keys.
    private static func unlockedPayload(timeout: UInt32, _ keys: SecretBytes) -> SecretBytes {
        SecretBytes(count: 4 + keys.count) { out in
            for index in 0..<4 { out[index] = UInt8(truncatingIfNeeded: timeout >> (24 - 8 * UInt32(index))) }
            keys.withUnsafeBytes { (out.baseAddress! + 4).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }

    private static func splitUnlockedPayload(_ stored: SecretBytes) -> (UInt32, SecretBytes)? {
        stored.withUnsafeBytes { bytes in
            guard bytes.count > 4 else { return nil }
            let timeout = bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return (max(timeout, 1), SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[4...])))
        }
    }

    /// Follows the user's lock state for keys held through it: once `keychain lock` or the idle
    /// timeout ended it, they are dropped here too; while it lasts, each use (at most once a
    /// second) pushes its idle timeout back.
    private func followUserUnlock() {
        guard heldThroughUserUnlock, keys.master == nil else { return }
        let now = ContinuousClock.now
        guard now - userUnlockConfirmed >= .seconds(1) else { return }
        userUnlockConfirmed = now
        if kernelKeyring.load(unlockedDescription) == nil {
            keys.classes = keys.classes.filter { !$0.key.opensWithUserUnlock }
            heldThroughUserUnlock = false
        } else {
            kernelKeyring.refresh(unlockedDescription, timeout: heldUnlockTimeout)
        }
    }

    var cacheDescription: String {
        "swift-keychain:v1:" + Digest.hex(header.vaultID)
    }

    private func lookupKey() throws(StoreError) -> HMACKey {
        if let lookup = keys.lookup { return lookup }
        try loadImplicitKeys()
        guard let lookup = keys.lookup else { throw .locked }
        return lookup
    }

    /// Loads what needs no passphrase: a key-file vault's master key, or the afterFirstUnlock
    /// keys another process left in the kernel keyring.
    private func loadImplicitKeys() throws(StoreError) {
        if keys.master != nil { return }
        switch header.protection {
        case .keyFile:
            let master: SecretBytes
            do {
                master = try masterKeyFromKeyFile()
            } catch {
                // Another process may have set a passphrase and removed the key file.
                try refreshHeader()
                if header.hasPassphrase { return try loadImplicitKeys() }
                throw error
            }
            try adopt(master: master)
        case .passphrase:
            guard configuration.usesKernelKeyring else { return }
            if keys.lookup == nil, let payload = kernelKeyring.load(cacheDescription) {
                _ = try adoptChecked(payload, allowed: { $0.survivesLock })
            }
            if usesUserUnlock, !keys.classes.keys.contains(where: \.opensWithUserUnlock),
               let stored = kernelKeyring.load(unlockedDescription), let (timeout, payload) = Self.splitUnlockedPayload(stored),
               try adoptChecked(payload, allowed: { $0.opensWithUserUnlock }) {
                heldThroughUserUnlock = true
                heldUnlockTimeout = timeout
                userUnlockConfirmed = ContinuousClock.now
                kernelKeyring.refresh(unlockedDescription, timeout: timeout)
            }
        }
    }

    /// Adopts the keys of a kernel-keyring payload only if every one of them has the check value
    /// the vault records (``KeyCheck``); a planted or stale payload is ignored.
    private func adoptChecked(_ payload: SecretBytes, allowed: (Accessibility) -> Bool) throws(StoreError) -> Bool {
        var candidate = KeyRing()
        guard candidate.adopt(cachePayload: payload, allowed: allowed) else { return false }
        let bytes = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readKeyCheck).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }
        guard let bytes, let stored = KeyCheck.decode(bytes), KeyCheck.verify(candidate, against: stored, vaultID: header.vaultID) else { return false }
        if let lookup = keys.lookup {
            // Another lookup key than the one this process holds: not this vault's cache.
            guard Digest.equal(KeyCheck.value(of: lookup.key, code: KeyCheck.lookupCode, vaultID: header.vaultID),
                               KeyCheck.value(of: candidate.lookup!.key, code: KeyCheck.lookupCode, vaultID: header.vaultID)) else { return false }
        } else {
            keys.lookup = candidate.lookup
        }
        for (accessibility, key) in candidate.classes where keys.classes[accessibility] == nil { keys.classes[accessibility] = key }
        return true
    }

    /// Records the check values of the keys this process unwrapped with the master key, so that
    /// other processes can trust them from the cache. Best effort: a read-only vault keeps its
    /// old checks (and other processes then need the passphrase).
    private func recordKeyChecks() {
        guard keys.master != nil else { return }
        let checks = KeyCheck.values(of: keys, vaultID: header.vaultID)
        let stored = (try? sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readKeyCheck).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in try s.step() ? s.blob(0) : nil }
        }) ?? nil
        var merged = stored.flatMap(KeyCheck.decode) ?? [:]
        merged.merge(checks) { $1 }
        let encoded = KeyCheck.encode(merged)
        guard encoded != stored else { return }
        let write = { () throws(StoreError) in
            try self.sql { () throws(SQLiteError) in try self.connection.statement(VaultSchema.writeKeyCheck).run([.blob(encoded)]) }
        }
        if connection.isInTransaction { try? write() } else { try? writeTransaction(write) }
    }

    func adopt(master: SecretBytes) throws(StoreError) {
        keys.master = master
        keys.lookup = HMACKey(try Self.crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: master, info: "swift-keychain lookup v1") })
    }

    private func masterKeyFromKeyFile() throws(StoreError) -> SecretBytes {
        let keyFile = try VaultFile.readKeyFile(location.keyFilePath)
        guard keyFile.count == 32 else { throw .corrupted("the key file \(location.keyFilePath) has the wrong size") }
        do {
            return try AESGCM.open(header.wrappedMasterKey, key: keyFile, associatedData: RecordCoding.masterKeyAssociatedData(header))
        } catch {
            throw .tampered("the master key does not open with the key file (header or key file altered)")
        }
    }

    /// The master key, and the passphrase's scrypt output (nil for a key-file vault).
    func openMasterKey(passphrase: SecretBytes) throws(StoreError) -> (SecretBytes, SecretBytes?) {
        guard case .passphrase(let parameters, let salt) = header.protection else { return (try masterKeyFromKeyFile(), nil) }
        let derived = try Self.crypto { () throws(OpenSSLError) in
            try Scrypt.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        }
        do {
            return (try AESGCM.open(header.wrappedMasterKey, key: derived, associatedData: RecordCoding.masterKeyAssociatedData(header)), derived)
        } catch {
            // Indistinguishable by design from an altered salt or parameter; the header's
            // checksum already caught accidental damage.
            throw .wrongPassphrase
        }
    }

    private func wrappingKey(for accessibility: Accessibility, master: SecretBytes) throws(StoreError) -> SecretBytes {
        if accessibility.isThisDeviceOnly {
            guard let machineID else { throw .unavailable("no machine id (/etc/machine-id) to bind ThisDeviceOnly items to") }
            return try Self.crypto { () throws(OpenSSLError) in
                try HKDF.deriveKey(from: master, salt: machineID, info: "swift-keychain class-wrap this-device-only v1")
            }
        }
        return try Self.crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: master, info: "swift-keychain class-wrap v1") }
    }

    private func machineCheck() throws(StoreError) -> [UInt8]? {
        guard let machineID else { return nil }
        return try lookupKey().authenticationCode(Array("machine".utf8) + machineID)
    }

    /// The class key for `accessibility`: from memory, the kernel keyring, or unwrapped with the
    /// master key; created (inside the caller's write transaction) when `create` and missing.
    private func classKey(_ accessibility: Accessibility, create: Bool) throws(StoreError) -> SealingKey {
        if let key = keys.classes[accessibility] { return key }
        if accessibility == .whenPasscodeSetThisDeviceOnly && !header.hasPassphrase { throw .passphraseRequired }
        try loadImplicitKeys()
        if let key = keys.classes[accessibility] { return key }
        guard let master = keys.master else { throw .locked }
        if accessibility.isThisDeviceOnly { try checkMachineBinding(create: create) }
        let wrapping = try wrappingKey(for: accessibility, master: master)
        let aad = RecordCoding.classKeyAssociatedData(vaultID: header.vaultID, accessibility: accessibility)
        if let wrapped = try wrappedClassKeys()[accessibility] {
            do {
                let key = SealingKey(try AESGCM.open(wrapped, key: wrapping, associatedData: aad))
                keys.classes[accessibility] = key
                return key
            } catch {
                throw .tampered("the wrapped key of class \(accessibility) failed authentication")
            }
        }
        guard create else { throw .tampered("items exist for class \(accessibility), which has no key") }
        let key = SealingKey(SecretBytes.random(count: 32))
        let wrapped = try Self.crypto { () throws(OpenSSLError) in try AESGCM.seal(key.key, key: wrapping, associatedData: aad) }
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.insertClassKey).run([.integer(Int64(accessibility.code)), .blob(wrapped)])
        }
        keys.classes[accessibility] = key
        if accessibility.survivesLock || accessibility.opensWithUserUnlock { publishToKernelKeyring() }
        return key
    }

    private func checkMachineBinding(create: Bool) throws(StoreError) {
        guard let expected = try machineCheck() else {
            throw .unavailable("no machine id (/etc/machine-id) to bind ThisDeviceOnly items to")
        }
        let stored = try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readMachineCheck).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in
                try s.step() ? s.blob(0) : nil
            }
        }
        if let stored {
            guard Digest.equal(stored, expected) else { throw .boundToAnotherMachine }
        } else if create {
            try sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writeMachineCheck).run([.blob(expected)]) }
        }
    }

    private func wrappedClassKeys() throws(StoreError) -> [Accessibility: [UInt8]] {
        var result: [Accessibility: [UInt8]] = [:]
        var unknown = false
        try sql { () throws(SQLiteError) in
            try connection.statement(VaultSchema.readClassKeys).with([]) { (s: Statement) throws(SQLiteError) in
                while try s.step() {
                    guard let accessibility = Accessibility(code: UInt8(truncatingIfNeeded: s.integer(0))) else { unknown = true; continue }
                    result[accessibility] = s.blob(1)
                }
            }
        }
        if unknown { throw .corrupted("a class key has an unknown protection code") }
        return result
    }

    /// Unwraps every existing class key this machine can open, so that afterFirstUnlock keys
    /// can be published to the kernel keyring right after an unlock.
    func loadExistingClassKeys() throws(StoreError) {
        for accessibility in try wrappedClassKeys().keys.sorted(by: { $0.code < $1.code }) {
            do {
                _ = try classKey(accessibility, create: false)
            } catch .boundToAnotherMachine {
                continue
            } catch .unavailable {
                continue
            }
        }
    }

    private func classAvailable(_ accessibility: Accessibility) -> Bool {
        if keys.classes[accessibility] != nil { return true }
        if accessibility == .whenPasscodeSetThisDeviceOnly && !header.hasPassphrase { return false }
        guard keys.master != nil else { return false }
        if accessibility.isThisDeviceOnly {
            guard (try? checkMachineBinding(create: false)) != nil else { return false }
        }
        return true
    }

    func publishToKernelKeyring() {
        // The check values also mark a rotation for other processes: recorded with or without a cache.
        recordKeyChecks()
        guard header.hasPassphrase, configuration.usesKernelKeyring, let payload = keys.cachePayload() else { return }
        do {
            try kernelKeyring.store(payload, as: cacheDescription)
            if usesUserUnlock, let unlocked = keys.cachePayload(of: { $0.opensWithUserUnlock }) {
                try kernelKeyring.store(Self.unlockedPayload(timeout: userUnlockSeconds, unlocked), as: unlockedDescription, timeout: userUnlockSeconds)
            }
            kernelKeyringState = .available
        } catch {
            // Fall back to this process only (the keys stay in `keys`), and say so in status().
            kernelKeyringState = .unavailable(reason: error.description)
        }
    }

    private func currentKernelKeyringState() -> VaultStatus.KernelKeyringState {
        guard configuration.usesKernelKeyring else { return .disabled }
        if let kernelKeyringState { return kernelKeyringState }
        let state: VaultStatus.KernelKeyringState
        switch kernelKeyring.probe() {
        case .success: state = .available
        case .failure(let error): state = .unavailable(reason: error.description)
        }
        kernelKeyringState = state
        return state
    }

    func lockKeys() {
        idleTimer?.cancel()
        idleTimer = nil
        // Without a passphrase there is nothing to lock: the key file reopens it on next use.
        keys.lock()
    }

    /// Locks first if the vault sat unused past its idle timeout, then records this use.
    private func touch() {
        let now = ContinuousClock.now
        if header.hasPassphrase, keys.master != nil, let timeout = configuration.idleTimeout, now - lastUse >= timeout {
            lockKeys()
        }
        lastUse = now
    }

    func startIdleTimer() {
        guard let timeout = configuration.idleTimeout, header.hasPassphrase else { return }
        idleTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        let interval = max(timeout / 4, .milliseconds(10))
        let nanoseconds = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.mutex.withLock {
                if ContinuousClock.now - self.lastUse >= timeout { self.lockKeys() }
            }
        }
        idleTimer = timer
        timer.resume()
    }

    // MARK: - Plumbing

    func withState<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        mutex.lock()
        defer { mutex.unlock() }
        touch()
        followUserUnlock()
        return try body()
    }

    func refreshHeader() throws(StoreError) {
        guard let bytes = try Self.storedHeader(in: connection) else { throw .corrupted("the header is missing") }
        let fresh = try VaultHeader.decode(bytes)
        guard fresh.vaultID == header.vaultID else { throw .tampered("the vault id changed under an open vault") }
        if fresh != header {
            header = fresh
        }
    }

    func writeTransaction<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try Self.writeTransaction(on: connection, body)
    }

    /// A write transaction whose database failures are mapped to ``StoreError``.
    private static func writeTransaction<R>(on connection: Connection, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        do {
            return try connection.writeTransaction(body)
        } catch {
            switch error {
            case .database(let failure): throw map(failure)
            case .body(let failure): throw failure
            }
        }
    }

    func sql<R>(_ body: () throws(SQLiteError) -> R) throws(StoreError) -> R { try Self.sql(body) }

    private static func sql<R>(_ body: () throws(SQLiteError) -> R) throws(StoreError) -> R {
        do { return try body() } catch { throw map(error) }
    }

    static func crypto<R>(_ body: () throws(OpenSSLError) -> R) throws(StoreError) -> R {
        do { return try body() } catch { throw .io("OpenSSL: \(error.description)") }
    }

    /// Creates the schema, the header and the key file of a new vault, or reads the header of
    /// an existing one, in one IMMEDIATE transaction, so racing creators serialize here.
    /// The stored header's bytes, or nil when there is none yet.
    private static func storedHeader(in connection: Connection) throws(StoreError) -> [UInt8]? {
        try sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readHeader).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in
                try s.step() ? s.blob(0) : nil
            }
        }
    }

    /// Creates a new vault (no passphrase, a key file) at the configuration's location, whole
    /// or not at all: the key file is linked into place first (never over an existing one),
    /// then the vault, made and synced in a temporary file, is linked into place (never over
    /// an existing one). If another process creates the vault at the same moment, its vault
    /// is the one that stays.
    ///
    /// - Throws: ``StoreError/orphanedKeyFile(vault:keyFile:)`` when a key file exists without
    ///   its vault (the vault was most probably moved: a new one would orphan that key).
    static func create(_ configuration: VaultConfiguration) throws(StoreError) {
        let location = configuration.location
        do throws(FileSystem.Failure) { try FileSystem.createDirectory(location.directory) } catch { throw map(error) }
        try VaultFile.checkDirectory(location.directory)
        let master = SecretBytes.random(count: 32)
        let keyFile = SecretBytes.random(count: 32)
        var header = VaultHeader(vaultID: Random.bytes(VaultHeader.vaultIDSize), protection: .keyFile)
        header.wrappedMasterKey = try crypto { () throws(OpenSSLError) in
            try AESGCM.seal(master, key: keyFile, associatedData: RecordCoding.masterKeyAssociatedData(header))
        }
        guard try VaultFile.createExclusively(keyFile, at: location.keyFilePath) else {
            // Another process may be creating this vault right now: give it a moment.
            guard VaultFile.waitForFile(location.path) else { throw .orphanedKeyFile(vault: location.path, keyFile: location.keyFilePath) }
            return
        }
        let temporary = VaultFile.temporaryName(for: location.path)
        defer { for path in [temporary, temporary + "-wal", temporary + "-shm"] { unlink(path) } }
        do {
            try FileSystem.createPrivateFile(temporary)
        } catch {
            FileSystem.remove(location.keyFilePath)
            throw map(error)
        }
        do throws(StoreError) {
            try initializeFile(temporary, header: header)
            let fd = Glibc.open(temporary, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { fsync(fd); close(fd) }
            guard try VaultFile.linkIntoPlace(temporary, location.path) else {
                throw .orphanedKeyFile(vault: location.path, keyFile: location.keyFilePath)
            }
        } catch {
            FileSystem.remove(location.keyFilePath)
            throw error
        }
    }

    /// Writes the schema and the header into the new, empty file at `path`. The connection is
    /// closed on return: SQLite checkpoints the WAL into the file and removes it.
    private static func initializeFile(_ path: String, header: VaultHeader) throws(StoreError) {
        let connection: Connection
        do { connection = try Connection(path: path, create: false) } catch { throw map(error, path: path) }
        try writeTransaction(on: connection) { () throws(StoreError) in
            try sql { () throws(SQLiteError) in
                try connection.execute(VaultSchema.create)
                try connection.statement(VaultSchema.writeHeader).run([.blob(header.encoded())])
            }
        }
    }

    /// An open failure, saying which file and, for permissions, that they are the reason.
    static func map(_ error: SQLiteError, path: String) -> StoreError {
        if error.systemErrno == EACCES || error.systemErrno == EPERM { return .io("cannot open \(path): permission denied") }
        if error.isCorruption { return .corrupted("\(path) is not a keychain vault (SQLite: \(error.message))") }
        return .io("cannot open \(path): \(error.message)")
    }

    /// The one place SQLite failures become ``StoreError``. `SQLITE_BUSY` only gets here after
    /// the busy timeout has expired.
    static func map(_ error: SQLiteError) -> StoreError {
        if error.isCorruption { return .corrupted("SQLite reports: \(error.message)") }
        if error.isConstraint { return .duplicateItem }
        if error.isBusy { return .io("the vault stayed locked by another process beyond the busy timeout") }
        if error.isOutOfSpace { return .io("no space left for the vault (disk full, quota or file-size limit); nothing was written") }
        if error.isWriteFailure { return .io("writing the vault failed (disk full, quota, file-size limit or a device error); nothing was written") }
        if error.isReadOnly { return .io("the vault is read-only") }
        return .io(error.message)
    }

    static func map(_ error: FileSystem.Failure) -> StoreError {
        .io(error.description)
    }
}

extension StoreError {
    /// Whether the error means the stored bytes are damaged or altered.
    var isDamage: Bool {
        switch self {
        case .tampered, .corrupted: true
        default: false
        }
    }

    /// Whether the error means "this item's key is not available here", as opposed to damage.
    var isUnavailableKey: Bool {
        switch self {
        case .locked, .boundToAnotherMachine, .passphraseRequired, .unavailable: true
        default: false
        }
    }
}

/// What an identity digest depends on: the class and the attributes it was computed from.
struct IdentityMemoKey: Hashable {
    let itemClass: ItemClass
    let attributes: Attributes
}
