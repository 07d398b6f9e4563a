import FoundationEssentials

/// Every collection and item of the Secret Service provider that owns the session bus's
/// `org.freedesktop.secrets` (gnome-keyring, KWallet, KeePassXC, `keychain serve`), whatever
/// program stored them: what `keychain migrate --foreign` moves when a user switches providers.
///
/// Unlike ``SecretServiceStore``, which keeps to this library's items of the default
/// collection, it sees each persistent collection and each item as the provider shows it:
/// label, attributes, secret and content type, untranslated. It never unlocks a collection;
/// only ``createCollection(label:)`` may make the provider prompt. Each libsecret call is
/// bounded by the timeout on its own, so that a large keyring is read whole.
package final class SecretServiceProviderContents: @unchecked Sendable {
    /// One item as the provider shows it.
    package struct ProviderItem: Sendable {
        /// Its D-Bus object path.
        package let path: String
        /// Its `Label`.
        package let label: String
        /// Its attributes, as the provider shows them.
        package let attributes: [String: String]
        /// Nil when not read (a locked collection, or a listing without secrets).
        package let secret: SecretBytes?
        /// The secret's content type (`text/plain`, `application/octet-stream`...).
        package let contentType: String
        /// Its `Created`, in seconds since the epoch (0 where the provider shows none).
        package let created: UInt64
        /// Its `Modified`, in seconds since the epoch (0 where the provider shows none).
        package let modified: UInt64
    }

    /// One collection as the provider shows it.
    package struct ProviderCollection: Sendable {
        /// Its D-Bus object path.
        package let path: String
        /// Its `Label`.
        package let label: String
        /// The collection the `default` alias names.
        package let isDefault: Bool
        /// The collection the `session` alias names: kept in memory until the provider stops
        /// (gnome-keyring's and `keychain serve`'s `session`), so never moved.
        package let isMemoryOnly: Bool
        /// Whether the provider holds its secrets closed (`Locked`): nothing is unlocked here.
        package let isLocked: Bool
        /// Its items, secrets unread while it is locked.
        package let items: [ProviderItem]
    }

    private let library: LibSecret
    /// The longest one call to the provider may take.
    package let timeout: Duration
    /// Which program the provider is: what of each item's shown attributes is read as stored
    /// in it (``SecretServiceProgram/storedAttributes(_:)``).
    package let program: SecretServiceProgram
    /// The bus name the provider is called at: a unique name (`:1.42`) reaches that one
    /// connection whoever owns `org.freedesktop.secrets` (a switch empties the old provider
    /// while `keychain serve` may already own the name); nil, the name libsecret calls by
    /// default (``SecretServiceOwner/addressedName``).
    package let busName: String?
    private var service: LibSecret.Pointer?
    /// The collections' proxies by path, listed or created, released with this object.
    private var proxies: [String: LibSecret.Pointer] = [:]

    /// Loads libsecret; connecting happens on first use.
    /// - Parameters:
    ///   - timeout: the longest one call to the provider may take (clamped to
    ///     ``SecretServiceStore/Configuration/timeoutRange``).
    ///   - program: which program the provider is (``SecretServiceOwner/program``).
    ///   - busName: the bus name to call it at (``busName``); nil for libsecret's default.
    /// - Throws: ``StoreError/unavailable(_:)`` when libsecret is not installed.
    package init(timeout: Duration = .seconds(5), program: SecretServiceProgram = .unknown, busName: String? = nil) throws(StoreError) {
        library = try LibSecret.shared.get()
        self.timeout = SecretServiceStore.Configuration(timeout: timeout).timeout
        self.program = program
        self.busName = busName
    }

    deinit {
        for proxy in proxies.values { library.objectUnref(proxy) }
        // GLib warns on the terminal about a release of nothing (no bus: never connected).
        if let service { library.objectUnref(service) }
    }

    /// How long a collection's creation may wait for the person answering the provider's
    /// prompt (gnome-keyring asks for the new keyring's password).
    static let promptTimeout = Duration.seconds(300)

    private func call(timeout: Duration? = nil) -> SecretServiceCall {
        let timeout = timeout ?? self.timeout
        return SecretServiceCall(library: library, deadline: Deadline(after: timeout), timeout: timeout)
    }

    private func connected() throws(StoreError) -> LibSecret.Pointer {
        if let service { return service }
        let library = self.library, busName = self.busName
        let connected: LibSecret.Pointer?
        do {
            connected = try call().object("connect to the Secret Service", .read, proxies: []) { cancellable, error in
                // Given a name, a connection of this object's own to it; libsecret's shared
                // one calls the name libsecret calls by default.
                guard let busName else { return library.serviceGetSync(LibSecret.serviceOpenSession, cancellable, error) }
                return LibSecretBusName.openService(library, at: busName, cancellable: cancellable, error: error)
            }
        } catch {
            throw SecretServiceCall.classifyConnection(error)
        }
        service = connected
        return connected!
    }

    /// How many sessions a listing is tried on when the provider and libsecret do not agree on
    /// the session's key: kwalletd refuses a public key shorter than 128 bytes and derives its
    /// key from the shared secret without its leading zero bytes, so now and then a
    /// `dh-ietf1024-sha256-aes128-cbc-pkcs7` session fails with it ("Client public key size is
    /// invalid", or "Received invalid secret" for every secret read).
    static let sessionAttempts = 4

    /// Whether `error` is such a failed session: another session (a new key) may do.
    static func isSessionKeyMismatch(_ error: StoreError) -> Bool {
        let text = error.description
        return text.contains("Client public key size is invalid") || text.contains("Received invalid secret")
    }

    /// Every collection with its items; the secrets of each unlocked, persistent one's items
    /// are read when `readingSecrets`. A session whose key the provider and libsecret did not
    /// agree on is replaced by a new one (up to `sessionAttempts` in all).
    /// - Throws: ``StoreError/unavailable(_:)`` with no provider, and the provider's errors.
    package func collections(readingSecrets: Bool) throws(StoreError) -> [ProviderCollection] {
        var attempt = 1
        while true {
            do {
                return try listCollections(readingSecrets: readingSecrets)
            } catch  where attempt < Self.sessionAttempts && Self.isSessionKeyMismatch(error) {
                attempt += 1
                dropSession()
            }
        }
    }

    /// Lets go of the provider: what a later listing, by this object or another, asks is
    /// answered anew, never from the proxies libsecret keeps of this one's items (which an
    /// earlier move deleted).
    package func disconnect() { dropSession() }

    /// Releases the connection and its session (libsecret's shared one), so that the next call
    /// opens a new session with a new key.
    private func dropSession() {
        for proxy in proxies.values { library.objectUnref(proxy) }
        proxies = [:]
        if let service { library.objectUnref(service) }
        service = nil
        library.serviceDisconnect()
    }

    private func listCollections(readingSecrets: Bool) throws(StoreError) -> [ProviderCollection] {
        let service = try connected()
        let library = self.library
        try call().succeed("list the collections", .read, proxies: [service]) { cancellable, error in
            library.serviceLoadCollectionsSync(service, cancellable, error) != 0
        }
        let defaultPath = try aliasPath("default"), sessionPath = try aliasPath("session")
        var result: [ProviderCollection] = []
        for collection in library.elements(library.serviceGetCollections(service)) {
            let path = library.proxyGetObjectPath(collection).map { String(cString: $0) } ?? ""
            if let old = proxies.updateValue(collection, forKey: path) { library.objectUnref(old) }
            let label = library.takeString(library.collectionGetLabel(collection)) ?? ""
            let locked = library.collectionGetLocked(collection) != 0
            let memoryOnly = path == sessionPath
            try call().succeed("list a collection's items", .read, proxies: [service, collection]) { cancellable, error in
                library.collectionLoadItemsSync(collection, cancellable, error) != 0
            }
            var items: [ProviderItem] = []
            for item in library.elements(library.collectionGetItems(collection)) {
                defer { library.objectUnref(item) }
                items.append(try read(item, secret: readingSecrets && !locked && !memoryOnly))
            }
            result.append(ProviderCollection(path: path, label: label, isDefault: path == defaultPath, isMemoryOnly: memoryOnly, isLocked: locked, items: items))
        }
        return result.sorted { ($0.isDefault ? 0 : 1, $0.path) < ($1.isDefault ? 0 : 1, $1.path) }
    }

    /// The path the alias names, or nil when it names none.
    private func aliasPath(_ alias: String) throws(StoreError) -> String? {
        let service = try connected()
        let library = self.library
        var path: String?
        try call().succeed("read the '\(alias)' alias", .read, proxies: [service]) { cancellable, error in
            let raw = library.serviceReadAliasPathSync(service, alias, cancellable, error)
            path = library.takeString(raw)
            return error.pointee == nil
        }
        return path.flatMap { $0 == "/" ? nil : $0 }
    }

    /// One item; its attributes every one the provider shows when `asShown`, else those
    /// stored in it.
    private func read(_ item: LibSecret.Pointer, secret: Bool, asShown: Bool = false) throws(StoreError) -> ProviderItem {
        let library = self.library
        let path = library.proxyGetObjectPath(item).map { String(cString: $0) } ?? ""
        let table = library.itemGetAttributes(item)
        let shown = library.dictionary(table)
        library.hashTableUnref(table)
        let attributes = asShown ? shown : program.storedAttributes(shown)
        let label = library.takeString(library.itemGetLabel(item)) ?? ""
        let created = library.itemGetCreated(item), modified = library.itemGetModified(item)
        guard secret else {
            return ProviderItem(path: path, label: label, attributes: attributes, secret: nil, contentType: "", created: created, modified: modified)
        }
        try call().succeed("read a secret", .read, proxies: [service, item]) { cancellable, error in
            library.itemLoadSecretSync(item, cancellable, error) != 0
        }
        guard let value = library.itemGetSecret(item) else { throw .collectionLocked(label) }
        defer { library.valueUnref(value) }
        var length = 0
        let contentType = library.valueGetContentType(value).map { String(cString: $0) } ?? "text/plain"
        let bytes = library.valueGet(value, &length)
        let copied = bytes.map { SecretBytes(UnsafeRawBufferPointer(start: $0, count: length)) } ?? SecretBytes([])
        return ProviderItem(path: path, label: label, attributes: attributes, secret: copied, contentType: contentType, created: created, modified: modified)
    }

    /// The item at `path` read back with its secret and every attribute the provider shows,
    /// or nil when there is none there: whether an item was kept as it was given.
    /// - Throws: the provider's errors (``StoreError/collectionLocked(_:)`` when its secret
    ///   cannot be read).
    package func itemAsShown(at path: String) throws(StoreError) -> ProviderItem? {
        let service = try connected()
        let library = self.library
        guard
            let item = try call().objectUnlessGone(
                "load an item", proxies: [service],
                { cancellable, error in
                    library.itemNewForPathSync(service, path, 0, cancellable, error)
                })
        else { return nil }
        defer { library.objectUnref(item) }
        return try read(item, secret: true, asShown: true)
    }

    /// Deletes the items at `paths`, each on its own; the paths that could not be deleted.
    package func deleteItems(_ paths: [String]) -> [String] {
        guard let service = try? connected() else { return paths }
        let library = self.library
        return paths.filter { path in
            do throws(StoreError) {
                guard
                    let item = try call().objectUnlessGone(
                        "load an item", proxies: [service],
                        { cancellable, error in
                            library.itemNewForPathSync(service, path, 0, cancellable, error)
                        })
                else { return false }
                defer { library.objectUnref(item) }
                try call().succeed("delete an item", .write, proxies: [service, item]) { cancellable, error in library.itemDeleteSync(item, cancellable, error) != 0 }
                return false
            } catch {
                return true
            }
        }
    }

    /// Creates a collection labelled `label`; its path. The provider may prompt (waited for up
    /// to `promptTimeout`), or refuse.
    /// - Throws: the provider's refusal (``StoreError/io(_:)``, ``StoreError/userCancelled``
    ///   for a dismissed prompt) or ``StoreError/unavailable(_:)`` when it did not answer in time.
    package func createCollection(label: String) throws(StoreError) -> String {
        let service = try connected()
        let library = self.library
        let created = try call(timeout: max(timeout, Self.promptTimeout)).object("create a collection", .write, proxies: [service], allowNil: true) { cancellable, error in
            library.collectionCreateSync(service, label, nil, 0, cancellable, error)
        }
        // libsecret answers a dismissed prompt with no collection and no error.
        guard let created else { throw .userCancelled }
        let path = library.proxyGetObjectPath(created).map { String(cString: $0) } ?? ""
        if let old = proxies.updateValue(created, forKey: path) { library.objectUnref(old) }
        return path
    }

    /// Deletes the collection at `path` (one listed or created through this object) with its items.
    /// - Throws: ``StoreError/itemNotFound`` for a path not listed or created here, and the
    ///   provider's errors.
    package func deleteCollection(_ path: String) throws(StoreError) {
        let service = try connected()
        guard let collection = proxies[path] else { throw .itemNotFound }
        let library = self.library
        try call().succeed("delete a collection", .write, proxies: [service, collection]) { cancellable, error in
            library.collectionDeleteSync(collection, cancellable, error) != 0
        }
    }

    /// Stores a new item in the collection at `path` (one listed or created through this
    /// object) with exactly these attributes (no schema added); the new item's path.
    /// - Throws: ``StoreError/itemNotFound`` for a path not listed or created here, and the
    ///   provider's errors (``StoreError/outcomeUnknown(_:)`` when it did not answer in time).
    package func createItem(
        in path: String, label: String, attributes: [String: String], secret: SecretBytes, contentType: String
    ) throws(StoreError) -> String {
        let service = try connected()
        guard let collection = proxies[path] else { throw .itemNotFound }
        let library = self.library
        let table = library.hashTable(attributes)
        defer { library.hashTableUnref(table) }
        let type = contentType.isEmpty ? "application/octet-stream" : contentType
        // libsecret copies the bytes into memory of its own before this returns.
        let value = secret.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return library.valueNew("", 0, type) }
            return library.valueNew(base.assumingMemoryBound(to: CChar.self), raw.count, type)
        }
        defer { library.valueUnref(value) }
        let item = try call().object("create an item", .write, proxies: [service, collection]) { cancellable, error in
            library.itemCreateSync(collection, nil, table, label, value, 0, cancellable, error)
        }
        defer { library.objectUnref(item) }
        return library.proxyGetObjectPath(item).map { String(cString: $0) } ?? ""
    }
}
