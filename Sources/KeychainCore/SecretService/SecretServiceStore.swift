import FoundationEssentials
import Synchronization

/// Keychain items in the desktop's Secret Service (GNOME Keyring, KWallet, KeePassXC), through
/// libsecret loaded at run time.
///
/// Items live in the collection the `default` alias names; a collection is never created and
/// never unlocked by this store (either would prompt). Each operation is bounded by
/// ``Configuration/timeout`` as a whole: no session bus, no Secret Service, a locked collection,
/// a daemon that stopped answering: each is a specific error within that time, never a hang.
///
/// The collection is shared with every other program of the user (Wi-Fi keys, browsers'
/// storage keys, other tools' tokens). This store sees only items of its own schema
/// (`xdg:schema` `org.swift-keychain.Item`) unless ``Configuration/foreignItems`` says
/// otherwise, and even then changes another program's item only when told it may; an update
/// keeps every attribute of an item it does not know.
///
/// What accessibility means here: every class is readable while the collection is unlocked
/// (the desktop unlocks it at login); ThisDeviceOnly cannot be enforced (the collection file can
/// be copied with its password); the value is kept as an attribute so it round-trips.
/// ``write(_:)`` applies its operations in order and, if one fails, restores what the earlier
/// ones changed: the Secret Service has no transactions, so a crash in the middle, or a daemon
/// that stops answering, can leave part of a batch (reported as
/// ``StoreError/outcomeUnknown(_:)`` or ``StoreError/partlyApplied(_:)``).
public final class SecretServiceStore: Store, @unchecked Sendable {
    /// Which items of other programs (without this library's schema) a store sees.
    public enum ForeignItems: Sendable, Equatable {
        /// Only this library's items (the default): other programs' items are neither read,
        /// changed nor deleted.
        case hidden
        /// Other programs' items are found by queries (for a migration from another program)
        /// but any write that would change or delete one fails with
        /// ``StoreError/invalidArgument(_:)``, changing nothing.
        case readOnly
        /// Other programs' items may be read, changed and deleted. Updates still keep their
        /// schema and every attribute this library does not know.
        case readWrite
    }

    /// How to reach the Secret Service and what to address there.
    public struct Configuration: Sendable {
        /// The timeouts accepted: shorter ones are raised to the lower bound, longer ones
        /// lowered to the upper bound.
        public static let timeoutRange: ClosedRange<Duration> = .milliseconds(10) ... .seconds(3600)

        private var boundedTimeout: Duration
        /// The longest one operation (every call it makes, waiting for other callers included)
        /// may take before it fails with ``StoreError/unavailable(_:)`` (reads) or
        /// ``StoreError/outcomeUnknown(_:)`` (writes). Clamped to ``timeoutRange``.
        public var timeout: Duration {
            get { boundedTimeout }
            set { boundedTimeout = min(max(newValue, Self.timeoutRange.lowerBound), Self.timeoutRange.upperBound) }
        }
        /// The collection alias to use.
        public var alias: String
        /// When set, every item carries this value in a `keychain-partition` attribute and only
        /// such items are seen: one application's (or one test's) items kept apart.
        public var partition: String?
        /// The largest value accepted, written or read, as in the vault. Default 1 MiB.
        public var maximumValueSize: Int
        /// Which items of other programs are seen; ``ForeignItems/hidden`` by default.
        public var foreignItems: ForeignItems

        /// A configuration; each parameter defaults as its property says.
        public init(
            timeout: Duration = .seconds(5), alias: String = "default", partition: String? = nil,
            maximumValueSize: Int = 1 << 20, foreignItems: ForeignItems = .hidden
        ) {
            boundedTimeout = Self.timeoutRange.lowerBound
            self.alias = alias
            self.partition = partition
            self.maximumValueSize = maximumValueSize
            self.foreignItems = foreignItems
            self.timeout = timeout
        }

        /// The timeout `KEYCHAIN_TIMEOUT` gives in `environment`, or nil when it gives none.
        /// - Throws: ``StoreError/invalidArgument(_:)`` as ``timeout(parsing:)`` does.
        package static func timeout(in environment: [String: String]) throws(StoreError) -> Duration? {
            guard let text = environment["KEYCHAIN_TIMEOUT"], !text.isEmpty else { return nil }
            return try timeout(parsing: text)
        }

        /// A timeout given as text in seconds (`KEYCHAIN_TIMEOUT`): a finite decimal number
        /// within ``timeoutRange``.
        /// - Throws: ``StoreError/invalidArgument(_:)`` for anything else (`5s`, `-1`, `NaN`,
        ///   `inf`, `1e10`), naming the range, rather than silently using another timeout.
        package static func timeout(parsing text: String) throws(StoreError) -> Duration {
            let range = "a number of seconds from 0.01 to 3600"
            guard let seconds = Double(text), seconds.isFinite else { throw .invalidArgument("KEYCHAIN_TIMEOUT must be \(range), not '\(text)'") }
            guard seconds >= 0.01, seconds <= 3600 else { throw .invalidArgument("KEYCHAIN_TIMEOUT must be \(range); \(text) is out of range") }
            return .nanoseconds(Int64((seconds * 1e9).rounded()))
        }
    }

    /// A write the Secret Service did not confirm (``StoreError/outcomeUnknown(_:)``), as the
    /// next call that reached it found it.
    package struct RecheckedWrite: Sendable, Equatable {
        /// The operation's position in its batch (0 for a single add, update or delete).
        package let operation: Int
        /// Whether the change had taken effect after all.
        package let applied: Bool
    }

    /// How this store was opened.
    public let configuration: Configuration
    private let library: LibSecret
    /// Unconfirmed writes waiting for the daemon to answer again (what to look for, and
    /// whether it should be there if the write happened), and those re-checked since.
    private struct Uncertain {
        var waiting: [(operation: Int, query: Query, shouldExist: Bool)] = []
        var rechecked: [RecheckedWrite] = []
    }
    private let uncertain = Mutex(Uncertain())

    /// The unconfirmed writes re-checked since the last call, oldest first (then forgotten):
    /// each ``StoreError/outcomeUnknown(_:)`` write is looked up again on the first later call
    /// that reaches the Secret Service.
    package func takeRecheckedWrites() -> [RecheckedWrite] {
        uncertain.withLock { uncertain in
            defer { uncertain.rechecked = [] }
            return uncertain.rechecked
        }
    }
    // libsecret's sync calls are not meant to run concurrently on one proxy; one at a time,
    // and waiting for the gate counts against the operation's deadline.
    private let gate = TimedGate()

    /// Loads libsecret. Connecting happens on first use.
    /// - Throws: ``StoreError/unavailable(_:)`` when libsecret is not installed.
    public init(_ configuration: Configuration = Configuration()) throws(StoreError) {
        self.configuration = configuration
        library = try LibSecret.shared.get()
    }

    /// Whether libsecret can be loaded here, without connecting.
    public static var isLibraryAvailable: Bool {
        if case .success = LibSecret.shared { return true }
        return false
    }

    /// Connects and describes the default collection: its label and whether it is locked.
    package func probe() throws(StoreError) -> (label: String, locked: Bool) {
        try session { (session) throws(StoreError) in
            (session.label, library.collectionGetLocked(session.collection) != 0)
        }
    }

    // MARK: Store

    public func isAvailable(_ accessibility: Accessibility) -> Bool {
        guard let state = try? probe() else { return false }
        return !state.locked
    }

    public func copyMatching(_ query: Query) throws(StoreError) -> [Item] {
        try query.validate()
        return try session { (session) throws(StoreError) -> [Item] in
            let found = try search(query, in: session)
            defer { found.forEach { library.objectUnref($0.item) } }
            guard !found.isEmpty else {
                if library.collectionGetLocked(session.collection) != 0 { throw .collectionLocked(session.label) }
                throw .itemNotFound
            }
            var items: [Item] = []
            for match in found {
                var item = Item(match.itemClass, attributes: match.attributes)
                if query.returnData { item.value = try secret(of: match, in: session).bytes }
                items.append(item)
                if query.limit == .one { break }
            }
            return items
        }
    }

    public func contains(_ query: Query) throws(StoreError) -> Bool {
        try query.validate()
        return try session { (session) throws(StoreError) -> Bool in
            let found = try search(query, in: session)
            found.forEach { library.objectUnref($0.item) }
            return !found.isEmpty
        }
    }

    @discardableResult
    public func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteResult {
        for operation in operations {
            try operation.validate()
            let value: SecretBytes?
            let accessControl: AccessControl?
            switch operation {
            case .add(let item), .upsert(let item): (value, accessControl) = (item.value, item.attributes.accessControl)
            case .update(_, let changes, let v): (value, accessControl) = (v, changes.accessControl)
            case .delete: (value, accessControl) = (nil, nil)
            }
            if let value, value.count > configuration.maximumValueSize { throw .valueTooLarge(limit: configuration.maximumValueSize) }
            // The Secret Service cannot bind an item to a proof of presence; storing it without
            // one would silently weaken what the caller asked for.
            if let accessControl {
                throw .unavailable("the Secret Service cannot protect an item with \(accessControl); use the vault for access-controlled items")
            }
        }
        return try session { (session) throws(StoreError) -> WriteResult in
            var journal = SecretServiceJournal(library: library)
            defer { journal.release() }
            var counts: [Int] = []
            do throws(StoreError) {
                for operation in operations {
                    counts.append(try apply(operation, in: session, journal: &journal))
                }
            } catch .outcomeUnknown(let why) {
                remember(operations[counts.count], at: counts.count)
                throw journal.rollBack(
                    after: .outcomeUnknown(why + "; the next call that reaches it looks again (takeRecheckedWrites())"),
                    timeLeft: false
                ) { (step) throws(StoreError) in try undo(step, in: session) }
            } catch {
                throw journal.rollBack(after: error, timeLeft: session.call.deadline.remainingMilliseconds > 0) { (step) throws(StoreError) in
                    try undo(step, in: session)
                }
            }
            return WriteResult(counts: counts)
        }
    }

    // MARK: Operations

    /// One item found by a search: the object, its decoded class and attributes, and what it
    /// carries that this library does not manage (kept on update, restored on undo).
    struct Match {
        let item: LibSecret.Pointer
        let itemClass: ItemClass
        let attributes: Attributes
        let raw: [String: String]
        let label: String
        /// Not of this library's schema: another program's item.
        let isForeign: Bool
    }

    private func apply(_ operation: WriteOperation, in session: Session, journal: inout SecretServiceJournal) throws(StoreError) -> Int {
        switch operation {
        case .add(let item):
            guard try !exists(Query(identifying: item), in: session) else { throw .duplicateItem }
            journal.created(try create(item, in: session))
            return 1
        case .upsert(let item):
            let existing = try search(Query(identifying: item), in: session)
            defer { existing.forEach { library.objectUnref($0.item) } }
            if let match = existing.first {
                try checkWritable(match)
                let old = try secret(of: match, in: session)
                var merged = match.attributes.merging(item.attributes)
                merged.creationDate = nil
                journal.changed(match, secret: old)
                try replace(match, with: Item(item.itemClass, attributes: merged, value: item.value ?? old.bytes), in: session)
                return 1
            }
            journal.created(try create(item, in: session))
            return 1
        case .update(let query, let changes, let value):
            let found = try search(query, in: session)
            defer { found.forEach { library.objectUnref($0.item) } }
            guard !found.isEmpty else {
                if library.collectionGetLocked(session.collection) != 0 { throw .collectionLocked(session.label) }
                throw .itemNotFound
            }
            for match in found { try checkWritable(match) }
            for match in found {
                let old = try secret(of: match, in: session)
                let updated = Item(match.itemClass, attributes: match.attributes.merging(changes), value: value ?? old.bytes)
                let identity = Query(identifying: updated)
                if identity.attributes != Query(identifying: Item(match.itemClass, attributes: match.attributes)).attributes,
                    try exists(identity, in: session)
                {
                    throw .duplicateItem
                }
                journal.changed(match, secret: old)
                try replace(match, with: updated, in: session)
            }
            return found.count
        case .delete(let query):
            let found = try search(query, in: session)
            defer { found.forEach { library.objectUnref($0.item) } }
            for match in found { try checkWritable(match) }
            for match in found {
                let old = try secret(of: match, in: session)
                journal.deleted(match, secret: old)
                try session.call.succeed("delete an item", .write, proxies: [session.service, match.item]) { cancellable, error in
                    library.itemDeleteSync(match.item, cancellable, error) != 0
                }
            }
            return found.count
        }
    }

    /// Notes what an unconfirmed operation would have left, for the re-check.
    func remember(_ operation: WriteOperation, at index: Int) {
        let entry: (Query, Bool)?
        switch operation {
        case .add(let item), .upsert(let item): entry = (Query(identifying: item), true)
        case .delete(let query): entry = (query, false)
        case .update: entry = nil  // what it changed cannot be told apart from what was there
        }
        guard let (query, shouldExist) = entry else { return }
        uncertain.withLock { $0.waiting.append((index, query, shouldExist)) }
    }

    /// Looks up the unconfirmed writes again, now that the daemon answers.
    private func recheckUncertainWrites(in session: Session) {
        let pending = uncertain.withLock { $0.waiting }
        guard !pending.isEmpty else { return }
        var found: [RecheckedWrite] = []
        for entry in pending {
            guard let matches = try? search(entry.query, in: session) else { return }  // still not answering: later
            matches.forEach { library.objectUnref($0.item) }
            found.append(RecheckedWrite(operation: entry.operation, applied: matches.isEmpty != entry.shouldExist))
        }
        uncertain.withLock {
            $0.waiting.removeFirst(min(pending.count, $0.waiting.count))
            $0.rechecked.append(contentsOf: found)
        }
    }

    private func checkWritable(_ match: Match) throws(StoreError) {
        guard match.isForeign, configuration.foreignItems != .readWrite else { return }
        throw .invalidArgument(
            "the query matches an item of another program ('\(match.label)', without this library's schema); such items are read-only unless the store is configured with foreignItems: .readWrite (the command: --foreign)"
        )
    }

    /// Puts back what one journal entry recorded.
    private func undo(_ step: SecretServiceJournal.Step, in session: Session) throws(StoreError) {
        switch step {
        case .created(let item):
            try session.call.succeed("delete an item", .write, proxies: [session.service, item]) { cancellable, error in
                library.itemDeleteSync(item, cancellable, error) != 0
            }
        case .changed(let item, let raw, let label, let secret):
            try setContents(of: item, attributes: raw, label: label, secret: secret, in: session)
        case .deleted(let raw, let label, let secret):
            library.objectUnref(try createRaw(attributes: raw, label: label, secret: secret, in: session))
        }
    }

    private func exists(_ query: Query, in session: Session) throws(StoreError) -> Bool {
        let found = try search(query, in: session)
        found.forEach { library.objectUnref($0.item) }
        return !found.isEmpty
    }

    private func search(_ query: Query, in session: Session) throws(StoreError) -> [Match] {
        let hidesForeign = configuration.foreignItems == .hidden
        var attributes = SecretServiceAttributes.search(query, partition: configuration.partition)
        if hidesForeign { attributes["xdg:schema"] = SecretServiceAttributes.schemaName }
        let table = library.hashTable(attributes)
        defer { library.hashTableUnref(table) }
        // The matching paths first, then each item: one deleted by another program in between
        // is passed over (libsecret's own search would fail as a whole).
        let paths = try session.call.strings("search the collection", proxies: [session.service, session.collection]) { cancellable, error in
            library.collectionSearchForPathsSync(session.collection, nil, table, cancellable, error)
        }
        var matches: [Match] = []
        for path in paths {
            let loaded = try session.call.objectUnlessGone("load an item", proxies: [session.service]) { cancellable, error in
                path.withCString { library.itemNewForPathSync(session.service, $0, 0, cancellable, error) }
            }
            guard let item = loaded else { continue }
            let attributesTable = library.itemGetAttributes(item)
            var raw = library.dictionary(attributesTable)
            library.hashTableUnref(attributesTable)
            // Items stored without libsecret's schema attribute (secret-tool's, for one) carry
            // their schema as the item's type: keep it with the attributes, so that an update,
            // which rewrites them all, keeps it too.
            if raw["xdg:schema"] == nil, let schema = library.takeString(library.itemGetSchemaName?(item)) { raw["xdg:schema"] = schema }
            let isForeign = raw["xdg:schema"] != SecretServiceAttributes.schemaName
            guard raw[SecretServiceAttributes.partitionKey] == configuration.partition,
                !(isForeign && hidesForeign),
                let decoded = SecretServiceAttributes.decode(raw),
                query.itemClass == nil || query.itemClass == decoded.0
            else {
                library.objectUnref(item)
                continue
            }
            let itemClass = decoded.0
            var attributes = decoded.1
            let label = library.takeString(library.itemGetLabel(item)) ?? ""
            attributes.label = label
            let created = library.itemGetCreated(item), modified = library.itemGetModified(item)
            if created > 0 { attributes.creationDate = Date(timeIntervalSince1970: TimeInterval(created)) }
            if modified > 0 { attributes.modificationDate = Date(timeIntervalSince1970: TimeInterval(modified)) }
            guard attributes.matches(query.attributes, itemClass: itemClass) else {
                library.objectUnref(item)
                continue
            }
            matches.append(Match(item: item, itemClass: itemClass, attributes: attributes, raw: raw, label: label, isForeign: isForeign))
        }
        return matches
    }

    /// An item's secret and its content type, as stored.
    struct StoredSecret {
        let bytes: SecretBytes
        let contentType: String
    }

    /// The item's secret; a locked item is ``StoreError/collectionLocked(_:)``, never "not
    /// found"; one larger than ``Configuration/maximumValueSize`` is refused, not copied.
    private func secret(of match: Match, in session: Session) throws(StoreError) -> StoredSecret {
        guard library.itemGetLocked(match.item) == 0 else { throw .collectionLocked(session.label) }
        var value = library.itemGetSecret(match.item)
        if value == nil {
            // Items found by a search carry no secret until loaded; load it (one D-Bus call).
            try session.call.succeed("read a secret", .read, proxies: [session.service, match.item]) { cancellable, error in
                library.itemLoadSecretSync(match.item, cancellable, error) != 0
            }
            value = library.itemGetSecret(match.item)
        }
        guard let value else { throw .collectionLocked(session.label) }
        defer { library.valueUnref(value) }
        var length = 0
        let contentType = library.valueGetContentType(value).map { String(cString: $0) } ?? "application/octet-stream"
        guard let bytes = library.valueGet(value, &length) else { return StoredSecret(bytes: SecretBytes([]), contentType: contentType) }
        guard length <= configuration.maximumValueSize else { throw .valueTooLarge(limit: configuration.maximumValueSize) }
        return StoredSecret(bytes: SecretBytes(UnsafeRawBufferPointer(start: bytes, count: length)), contentType: contentType)
    }

    private func secretValue(_ secret: SecretBytes?, contentType: String? = nil) -> LibSecret.Pointer? {
        let bytes = secret ?? SecretBytes([])
        return bytes.withUnsafeBytes { raw in
            // Text stays text, so `secret-tool lookup` prints it; anything else is stored as bytes.
            let type = contentType ?? (String(validating: raw, as: UTF8.self) != nil ? "text/plain" : "application/octet-stream")
            var empty: CChar = 0
            return library.valueNew(raw.baseAddress?.assumingMemoryBound(to: CChar.self) ?? withUnsafePointer(to: &empty) { $0 }, raw.count, type)
        }
    }

    private func create(_ item: Item, in session: Session) throws(StoreError) -> LibSecret.Pointer {
        let attributes = SecretServiceAttributes.encode(item.itemClass, item.attributes, partition: configuration.partition)
        let label = SecretServiceAttributes.label(item.itemClass, item.attributes)
        return try createRaw(attributes: attributes, label: label, secret: StoredSecret(bytes: item.value ?? SecretBytes([]), contentType: ""), in: session)
    }

    /// Creates an item with exactly these attributes (no schema added); a new reference.
    private func createRaw(attributes: [String: String], label: String, secret: StoredSecret, in session: Session) throws(StoreError) -> LibSecret.Pointer {
        let table = library.hashTable(attributes)
        defer { library.hashTableUnref(table) }
        let value = secretValue(secret.bytes, contentType: secret.contentType.isEmpty ? nil : secret.contentType)
        defer { library.valueUnref(value) }
        let created = try session.call.object("create an item", .write, proxies: [session.service, session.collection]) { cancellable, error in
            library.itemCreateSync(session.collection, nil, table, label, value, 0, cancellable, error)
        }
        return created!
    }

    /// Writes `item` over a found item, keeping every attribute it has that this library does
    /// not manage (another program's `application`, its `xdg:schema`...).
    private func replace(_ match: Match, with item: Item, in session: Session) throws(StoreError) {
        let attributes = SecretServiceAttributes.merge(
            item.itemClass, old: match.attributes, new: item.attributes, into: match.raw,
            partition: configuration.partition)
        let label = SecretServiceAttributes.label(item.itemClass, item.attributes)
        try setContents(
            of: match.item, attributes: attributes, label: label,
            secret: StoredSecret(bytes: item.value ?? SecretBytes([]), contentType: ""), in: session)
    }

    private func setContents(
        of target: LibSecret.Pointer, attributes: [String: String], label: String, secret: StoredSecret,
        in session: Session
    ) throws(StoreError) {
        let table = library.hashTable(attributes)
        defer { library.hashTableUnref(table) }
        let value = secretValue(secret.bytes, contentType: secret.contentType.isEmpty ? nil : secret.contentType)
        defer { library.valueUnref(value) }
        let proxies = [session.service, target]
        try session.call.succeed("update an item's secret", .write, proxies: proxies) { cancellable, error in library.itemSetSecretSync(target, value, cancellable, error) != 0 }
        try session.call.succeed("update an item's attributes", .write, proxies: proxies) { cancellable, error in
            library.itemSetAttributesSync(target, nil, table, cancellable, error) != 0
        }
        try session.call.succeed("update an item's label", .write, proxies: proxies) { cancellable, error in library.itemSetLabelSync(target, label, cancellable, error) != 0 }
    }

    // MARK: Sessions

    /// What one operation works with: the service, the collection the alias names, and the
    /// calls bounded by the operation's deadline.
    struct Session {
        let service: LibSecret.Pointer
        let collection: LibSecret.Pointer
        let label: String
        let call: SecretServiceCall
    }

    /// Runs `body` with the collection the alias names, one operation at a time, everything
    /// (waiting for the gate included) within one deadline.
    private func session<R>(_ body: (Session) throws(StoreError) -> R) throws(StoreError) -> R {
        let timeout = configuration.timeout
        let deadline = Deadline(after: timeout)
        guard gate.enter(by: deadline) else {
            throw .unavailable("the Secret Service did not answer within \(timeout) (other calls of this process were still waiting for it)")
        }
        defer { gate.leave() }
        let call = SecretServiceCall(library: library, deadline: deadline, timeout: timeout)
        do throws(StoreError) {
            let service: LibSecret.Pointer?
            do throws(StoreError) {
                service = try call.object("connect to the Secret Service", .read, proxies: []) { cancellable, error in
                    library.serviceGetSync(LibSecret.serviceOpenSession, cancellable, error)
                }
            } catch {
                throw SecretServiceCall.classifyConnection(error)
            }
            defer { library.objectUnref(service) }
            let alias = configuration.alias
            let collection = try call.object("find the '\(alias)' collection", .read, proxies: [service], allowNil: true) { cancellable, error in
                library.collectionForAliasSync(service, alias, 0, cancellable, error)
            }
            guard let service, let collection else {
                throw StoreError.unavailable(
                    "the Secret Service has no '\(alias)' collection; create one in your keyring manager (it is never created implicitly, which would prompt)")
            }
            defer { library.objectUnref(collection) }
            let label = library.takeString(library.collectionGetLabel(collection)) ?? alias
            let session = Session(service: service, collection: collection, label: label, call: call)
            recheckUncertainWrites(in: session)
            return try body(session)
        } catch {
            // After the daemon vanished, libsecret's cached connection is dead: drop it so the
            // next call reconnects (or fails just as clearly).
            if case .unavailable = error { library.serviceDisconnect() }
            if case .outcomeUnknown = error { library.serviceDisconnect() }
            throw error
        }
    }
}
