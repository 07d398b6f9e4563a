import FoundationEssentials
import Dispatch

/// Keychain items in the desktop's Secret Service (GNOME Keyring, KWallet, KeePassXC), through
/// libsecret loaded at run time.
///
/// Items live in the collection the `default` alias names; a collection is never created and
/// never unlocked by this store (either would prompt). Every call is bounded by
/// ``Configuration/timeout``: no session bus, no Secret Service, a locked collection, a daemon
/// that stopped answering: each is a specific error within that time, never a hang.
///
/// What accessibility means here: every class is readable while the collection is unlocked
/// (the desktop unlocks it at login); ThisDeviceOnly cannot be enforced (the collection file can
/// be copied with its password); the value is kept as an attribute so it round-trips.
/// ``write(_:)`` applies its operations in order and, if one fails, undoes the earlier ones:
/// the Secret Service has no transactions, so a crash in the middle can leave part of a batch.
public final class SecretServiceStore: Store, @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The longest any one call may take before it fails with ``StoreError/unavailable(_:)``.
        public var timeout: Duration
        /// The collection alias to use.
        public var alias: String
        /// When set, every item carries this value in a `keychain-partition` attribute and only
        /// such items are seen: one application's (or one test's) items kept apart.
        public var partition: String?

        /// The largest value accepted, as in the vault. Default 1 MiB.
        public var maximumValueSize: Int

        public init(timeout: Duration = .seconds(5), alias: String = "default", partition: String? = nil, maximumValueSize: Int = 1 << 20) {
            self.timeout = timeout
            self.alias = alias
            self.partition = partition
            self.maximumValueSize = maximumValueSize
        }
    }

    public let configuration: Configuration
    private let library: LibSecret
    // libsecret's sync calls are not meant to run concurrently on one proxy; one at a time.
    private let lock = Lock()

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
    public func probe() throws(StoreError) -> (label: String, locked: Bool) {
        try session { (collection, _) throws(StoreError) in
            (library.takeString(library.collectionGetLabel(collection)) ?? configuration.alias, library.collectionGetLocked(collection) != 0)
        }
    }

    // MARK: Store

    public func isAvailable(_ accessibility: Accessibility) -> Bool {
        guard let state = try? probe() else { return false }
        return !state.locked
    }

    public func copyMatching(_ query: Query) throws(StoreError) -> [Item] {
        try session { (collection, call) throws(StoreError) -> [Item] in
            let found = try search(query, in: collection, call: call)
            defer { found.forEach { library.objectUnref($0.item) } }
            guard !found.isEmpty else {
                if library.collectionGetLocked(collection) != 0 { throw .locked }
                throw .itemNotFound
            }
            var items: [Item] = []
            for match in found {
                var item = Item(match.itemClass, attributes: match.attributes)
                if query.returnData { item.value = try secret(of: match.item, call: call) }
                items.append(item)
                if query.limit == .one { break }
            }
            return items
        }
    }

    public func contains(_ query: Query) throws(StoreError) -> Bool {
        try session { (collection, call) throws(StoreError) -> Bool in try exists(query, in: collection, call: call) }
    }

    @discardableResult
    public func write(_ operations: [WriteOperation]) throws(StoreError) -> WriteResult {
        for operation in operations {
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
        return try session { (collection, call) throws(StoreError) -> WriteResult in
            var undo: [Undo] = []
            var counts: [Int] = []
            do throws(StoreError) {
                for operation in operations {
                    counts.append(try apply(operation, collection: collection, call: call, undo: &undo))
                }
            } catch {
                for step in undo.reversed() { try? rollBack(step, collection: collection, call: call) }
                throw error
            }
            return WriteResult(counts: counts)
        }
    }

    // MARK: Operations

    private struct Match {
        let item: LibSecret.Pointer
        let itemClass: ItemClass
        let attributes: Attributes
    }

    /// What to do to undo one applied change.
    private enum Undo {
        case deleteCreated(Item)
        case recreate(Item)
    }

    private func apply(_ operation: WriteOperation, collection: LibSecret.Pointer, call: Call, undo: inout [Undo]) throws(StoreError) -> Int {
        switch operation {
        case .add(let item):
            guard try !exists(Query(identifying: item), in: collection, call: call) else { throw .duplicateItem }
            try create(item, in: collection, call: call)
            undo.append(.deleteCreated(item))
            return 1
        case .upsert(let item):
            let existing = try search(Query(identifying: item), in: collection, call: call)
            defer { existing.forEach { library.objectUnref($0.item) } }
            if let match = existing.first {
                let old = Item(match.itemClass, attributes: match.attributes, value: try secret(of: match.item, call: call))
                var merged = match.attributes.merging(item.attributes)
                merged.creationDate = nil
                try replace(match.item, with: Item(item.itemClass, attributes: merged, value: item.value ?? old.value), call: call)
                undo.append(.recreate(old))
                return 1
            }
            try create(item, in: collection, call: call)
            undo.append(.deleteCreated(item))
            return 1
        case .update(let query, let changes, let value):
            let found = try search(query, in: collection, call: call)
            defer { found.forEach { library.objectUnref($0.item) } }
            guard !found.isEmpty else {
                if library.collectionGetLocked(collection) != 0 { throw .locked }
                throw .itemNotFound
            }
            for match in found {
                let old = Item(match.itemClass, attributes: match.attributes, value: try secret(of: match.item, call: call))
                let updated = Item(match.itemClass, attributes: match.attributes.merging(changes), value: value ?? old.value)
                let identity = Query(identifying: updated)
                if identity.attributes != Query(identifying: old).attributes, try exists(identity, in: collection, call: call) {
                    throw .duplicateItem
                }
                try replace(match.item, with: updated, call: call)
                undo.append(.recreate(old))
            }
            return found.count
        case .delete(let query):
            let found = try search(query, in: collection, call: call)
            defer { found.forEach { library.objectUnref($0.item) } }
            for match in found {
                let old = Item(match.itemClass, attributes: match.attributes, value: try secret(of: match.item, call: call))
                try call.run("delete an item") { cancellable, error in library.itemDeleteSync(match.item, cancellable, error) != 0 }
                undo.append(.recreate(old))
            }
            return found.count
        }
    }

    private func rollBack(_ step: Undo, collection: LibSecret.Pointer, call: Call) throws(StoreError) {
        switch step {
        case .deleteCreated(let item):
            let found = try search(Query(identifying: item), in: collection, call: call)
            defer { found.forEach { library.objectUnref($0.item) } }
            for match in found {
                try call.run("delete an item") { cancellable, error in library.itemDeleteSync(match.item, cancellable, error) != 0 }
            }
        case .recreate(let item):
            let found = try search(Query(identifying: item), in: collection, call: call)
            defer { found.forEach { library.objectUnref($0.item) } }
            if let match = found.first {
                try replace(match.item, with: item, call: call)
            } else {
                try create(item, in: collection, call: call)
            }
        }
    }

    private func exists(_ query: Query, in collection: LibSecret.Pointer, call: Call) throws(StoreError) -> Bool {
        let found = try search(query, in: collection, call: call)
        found.forEach { library.objectUnref($0.item) }
        return !found.isEmpty
    }

    private func search(_ query: Query, in collection: LibSecret.Pointer, call: Call) throws(StoreError) -> [Match] {
        let table = library.hashTable(SecretServiceAttributes.search(query, partition: configuration.partition))
        defer { library.hashTableUnref(table) }
        // An empty GList is NULL: finding nothing is not an error.
        let list = try call.value("search the collection", allowNil: true) { cancellable, error in
            library.collectionSearchSync(collection, nil, table, LibSecret.searchAll, cancellable, error)
        }
        var matches: [Match] = []
        for item in library.elements(list) {
            let attributesTable = library.itemGetAttributes(item)
            let raw = library.dictionary(attributesTable)
            library.hashTableUnref(attributesTable)
            guard raw[SecretServiceAttributes.partitionKey] == configuration.partition,
                  let decoded = SecretServiceAttributes.decode(raw),
                  query.itemClass == nil || query.itemClass == decoded.0
            else {
                library.objectUnref(item)
                continue
            }
            let itemClass = decoded.0
            var attributes = decoded.1
            attributes.label = library.takeString(library.itemGetLabel(item))
            let created = library.itemGetCreated(item), modified = library.itemGetModified(item)
            if created > 0 { attributes.creationDate = Date(timeIntervalSince1970: TimeInterval(created)) }
            if modified > 0 { attributes.modificationDate = Date(timeIntervalSince1970: TimeInterval(modified)) }
            guard attributes.matches(query.attributes, itemClass: itemClass) else {
                library.objectUnref(item)
                continue
            }
            matches.append(Match(item: item, itemClass: itemClass, attributes: attributes))
        }
        return matches
    }

    /// The item's secret; a locked item is ``StoreError/locked``, never "not found".
    private func secret(of item: LibSecret.Pointer, call: Call) throws(StoreError) -> SecretBytes {
        guard library.itemGetLocked(item) == 0 else { throw .locked }
        var value = library.itemGetSecret(item)
        if value == nil {
            // Items found by a search carry no secret until loaded; load it (one D-Bus call).
            try call.run("read a secret") { cancellable, error in
                library.itemLoadSecretSync(item, cancellable, error) != 0
            }
            value = library.itemGetSecret(item)
        }
        guard let value else { throw .locked }
        defer { library.valueUnref(value) }
        var length = 0
        guard let bytes = library.valueGet(value, &length) else { return SecretBytes([]) }
        return SecretBytes(UnsafeRawBufferPointer(start: bytes, count: length))
    }

    private func secretValue(_ secret: SecretBytes?) -> LibSecret.Pointer? {
        let bytes = secret ?? SecretBytes([])
        return bytes.withUnsafeBytes { raw in
            // Text stays text, so `secret-tool lookup` prints it; anything else is stored as bytes.
            let isText = String(validating: raw, as: UTF8.self) != nil
            var empty: CChar = 0
            return library.valueNew(raw.baseAddress?.assumingMemoryBound(to: CChar.self) ?? withUnsafePointer(to: &empty) { $0 }, raw.count,
                                    isText ? "text/plain" : "application/octet-stream")
        }
    }

    private func create(_ item: Item, in collection: LibSecret.Pointer, call: Call) throws(StoreError) {
        let table = library.hashTable(SecretServiceAttributes.encode(item.itemClass, item.attributes, partition: configuration.partition))
        defer { library.hashTableUnref(table) }
        let value = secretValue(item.value)
        defer { library.valueUnref(value) }
        let label = SecretServiceAttributes.label(item.itemClass, item.attributes)
        let created = try call.value("create an item") { cancellable, error in
            library.itemCreateSync(collection, nil, table, label, value, 0, cancellable, error)
        }
        library.objectUnref(created)
    }

    private func replace(_ target: LibSecret.Pointer, with item: Item, call: Call) throws(StoreError) {
        let table = library.hashTable(SecretServiceAttributes.encode(item.itemClass, item.attributes, partition: configuration.partition))
        defer { library.hashTableUnref(table) }
        let value = secretValue(item.value)
        defer { library.valueUnref(value) }
        let label = SecretServiceAttributes.label(item.itemClass, item.attributes)
        try call.run("update an item's secret") { cancellable, error in library.itemSetSecretSync(target, value, cancellable, error) != 0 }
        try call.run("update an item's attributes") { cancellable, error in library.itemSetAttributesSync(target, nil, table, cancellable, error) != 0 }
        try call.run("update an item's label") { cancellable, error in library.itemSetLabelSync(target, label, cancellable, error) != 0 }
    }

    // MARK: Sessions and bounded calls

    /// Runs `body` with the collection the alias names, one operation at a time.
    private func session<R>(_ body: (LibSecret.Pointer, Call) throws(StoreError) -> R) throws(StoreError) -> R {
        lock.lock()
        defer { lock.unlock() }
        let call = Call(library: library, timeout: configuration.timeout)
        do throws(StoreError) {
            let service = try call.value("connect to the Secret Service") { cancellable, error in
                library.serviceGetSync(LibSecret.serviceOpenSession, cancellable, error)
            }
            defer { library.objectUnref(service) }
            let collection = try call.value("find the '\(configuration.alias)' collection", allowNil: true) { cancellable, error in
                library.collectionForAliasSync(service, configuration.alias, 0, cancellable, error)
            }
            guard let collection else {
                throw StoreError.unavailable("the Secret Service has no '\(configuration.alias)' collection; create one in your keyring manager (it is never created implicitly, which would prompt)")
            }
            defer { library.objectUnref(collection) }
            return try body(collection, call)
        } catch {
            // After the daemon vanished, libsecret's cached connection is dead: drop it so the
            // next call reconnects (or fails just as clearly).
            if case .unavailable = error { library.serviceDisconnect() }
            throw error
        }
    }

    /// One bounded libsecret call: a GCancellable that a watchdog cancels after the timeout.
    struct Call {
        let library: LibSecret
        let timeout: Duration

        func run(_ what: String, _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> Bool) throws(StoreError) {
            _ = try value(what, allowNil: true) { cancellable, error in body(cancellable, error) ? UnsafeMutableRawPointer(bitPattern: 1) : nil }
        }

        func value(_ what: String, allowNil: Bool = false, _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> LibSecret.Pointer?) throws(StoreError) -> LibSecret.Pointer? {
            let cancellable = library.cancellableNew()
            let watchdog = Watchdog()
            let library = self.library
            let work = DispatchWorkItem {
                watchdog.fire { library.cancellableCancel(cancellable) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(timeout.components.seconds) * 1_000_000_000 + Int(timeout.components.attoseconds / 1_000_000_000)), execute: work)
            var error: LibSecret.Pointer?
            let result = body(cancellable, &error)
            let timedOut = watchdog.disarm()
            work.cancel()
            library.objectUnref(cancellable)
            let failure = library.consume(error)
            if timedOut {
                throw .unavailable("the Secret Service did not answer within \(timeout) (while trying to \(what))")
            }
            if let failure { throw Self.classify(failure, what: what) }
            if result == nil && !allowNil { throw .io("Secret Service: could not \(what)") }
            return result
        }

        /// The one place libsecret's messages become ``StoreError``s.
        static func classify(_ message: String, what: String) -> StoreError {
            let lower = message.lowercased()
            if lower.contains("locked") { return .locked }
            if lower.contains("autolaunch") || lower.contains("dbus_session_bus_address") || lower.contains("cannot spawn a message bus") {
                return .unavailable("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and none could be found)")
            }
            if lower.contains("was not provided by any .service files") || lower.contains("serviceunknown") || lower.contains("not activatable") {
                return .unavailable("no Secret Service is running on the session bus (start GNOME Keyring, KWallet or KeePassXC)")
            }
            if lower.contains("noreply") || lower.contains("no reply") || lower.contains("has no owner") || lower.contains("closed") || lower.contains("disconnected") {
                return .unavailable("the Secret Service stopped answering (\(message))")
            }
            if lower.contains("no such object") || lower.contains("does not exist") {
                return .unavailable("the Secret Service has no usable default collection (\(message))")
            }
            return .io("Secret Service: could not \(what): \(message)")
        }
    }

    /// Lets the watchdog and the caller agree, once, on whether the timeout fired.
    final class Watchdog: @unchecked Sendable {
        private let lock = Lock()
        private var fired = false
        private var disarmed = false

        func fire(_ action: () -> Void) {
            lock.lock()
            defer { lock.unlock() }
            guard !disarmed else { return }
            fired = true
            action()
        }

        /// Stops the watchdog; true if it had already fired.
        func disarm() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            disarmed = true
            return fired
        }
    }
}
