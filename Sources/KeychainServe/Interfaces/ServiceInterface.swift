import KeychainCore

/// `org.freedesktop.Secret.Service`, on `/org/freedesktop/secrets`.
enum ServiceInterface {
    static let name = "org.freedesktop.Secret.Service"

    static let methods = [
        ServedMethod(name, "OpenSession", "sv", "vo") { (daemon, call) throws(ServiceError) in
            let (output, path) = try daemon.sessions.open(algorithm: call.arguments[0].string!, input: call.arguments[1].variantContents!, for: call.sender)
            return [.variant(output), .objectPath(path)]
        },
        ServedMethod(name, "CreateCollection", "a{sv}s", "oo") { (daemon, call) throws(ServiceError) in
            try daemon.createCollection(properties: call.arguments[0], alias: call.arguments[1].string!)
        },
        ServedMethod(name, "SearchItems", "a{ss}", "aoao") { (daemon, call) throws(ServiceError) in
            let attributes = try daemon.checkedAttributes(call.arguments[0])
            var unlocked: [String] = [], locked: [String] = []
            for collection in daemon.collections.all {
                let paths = try collection.search(attributes).map { ObjectPath.itemPath(collection.name, $0) }
                if collection.isLocked { locked += paths } else { unlocked += paths }
            }
            return [.paths(unlocked), .paths(locked)]
        },
        ServedMethod(name, "Unlock", "ao", "aoo") { (daemon, call) throws(ServiceError) in try daemon.unlock(call.arguments[0].pathList!, for: call.sender) },
        ServedMethod(name, "Lock", "ao", "aoo") { (daemon, call) throws(ServiceError) in try daemon.lock(call.arguments[0].pathList!) },
        ServedMethod(name, "GetSecrets", "aoo", "a{o(oayays)}", carriesSecret: true) { (daemon, call) throws(ServiceError) in
            let session = try daemon.session(call.arguments[1].objectPath!, for: call.sender)
            var secrets: [BusValue] = []
            for path in Set(call.arguments[0].pathList!).sorted() {
                // Items that do not exist, or whose collection is locked, are left out, as the
                // specification's reply maps only the items whose secrets it gives.
                guard let (collection, id) = try? daemon.item(at: path), !collection.isLocked, let record = try? collection.record(id),
                    let value = try? collection.secret(id)
                else { continue }
                secrets.append(.entry(.objectPath(path), try session.secretStruct(value, contentType: record.contentType)))
            }
            return [.array(element: "{o(oayays)}", secrets)]
        },
        ServedMethod(name, "ReadAlias", "s", "o") { (daemon, call) throws(ServiceError) in
            // The vault may have opened since start (`keychain unlock`): its aliases come in now.
            daemon.loadVaultContents()
            guard let collection = daemon.collections.resolve(alias: call.arguments[0].string!) else { return [.objectPath(ObjectPath.none)] }
            return [.objectPath(ObjectPath.collectionPath(collection.name))]
        },
        ServedMethod(name, "SetAlias", "so", "") { (daemon, call) throws(ServiceError) in
            try daemon.setAlias(call.arguments[0].string!, to: call.arguments[1].objectPath!)
            return []
        },
    ]
}

extension SecretServiceDaemon {
    fileprivate func setAlias(_ alias: String, to target: String) throws(ServiceError) {
        guard alias.utf8.count <= 255, !alias.isEmpty, alias.utf8.allSatisfy({ $0 == 95 || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }) else {
            throw .init(.invalidArgs, "an alias is letters, digits and underscores")
        }
        if target == ObjectPath.none {
            try keepAlias(alias, naming: nil)
            collections.removeAlias(alias)
            return
        }
        guard let object = ObjectPath(target), case .collection(let name, false) = object, collections.contains(name) else {
            throw .noSuchObject(target)
        }
        try keepAlias(alias, naming: name)
        collections.setAlias(alias, to: name)
    }

    /// The objects of `paths` open now (the user's unlock state is read again); the rest wait
    /// behind a prompt: a pinentry where one can be shown, else the user's own `keychain unlock`
    /// (``PromptInterface``).
    fileprivate func unlock(_ paths: [String], for sender: String) throws(ServiceError) -> [BusValue] {
        var unlocked: [String] = [], waiting = false
        for path in paths {
            guard let object = ObjectPath(path) else { continue }
            switch object {
            case .collection, .item:
                guard let collection = try? collection(object) else { continue }
                if collection.isLocked { waiting = true } else { unlocked.append(path) }
            default: continue
            }
        }
        guard waiting else { return [.paths(unlocked), .objectPath(ObjectPath.none)] }
        let admitted = prompts.add(for: sender)
        admitted.unwantedDialog?.cancel()
        for id in admitted.reclaimed { promptCompleted(id, dismissed: true, []) }
        return [.paths(unlocked), .objectPath(ObjectPath.promptPath(admitted.id))]
    }

    /// Locks the vault for the user, as `keychain lock` does (every process of the user, this
    /// daemon too). A vault without a passphrase cannot be locked: its
    /// objects stay open and are not listed as locked.
    fileprivate func lock(_ paths: [String]) throws(ServiceError) -> [BusValue] {
        let named = paths.filter { path in
            guard let object = ObjectPath(path) else { return false }
            switch object {
            case .collection, .item: return (try? collection(object))?.isKeptInVault == true
            default: return false
            }
        }
        guard let vault, vault.hasPassphrase, !named.isEmpty else { return [.paths([]), .objectPath(ObjectPath.none)] }
        vault.lockForUser()
        announceLockChanges()
        return [.paths(named), .objectPath(ObjectPath.none)]
    }

    /// A new collection of the vault (a scope of its own, see ``VaultCollection``), named after
    /// its label; the collection the alias names when it names one already.
    fileprivate func createCollection(properties: BusValue, alias: String) throws(ServiceError) -> [BusValue] {
        if !alias.isEmpty, let existing = collections.resolve(alias: alias) {
            return [.objectPath(ObjectPath.collectionPath(existing.name)), .objectPath(ObjectPath.none)]
        }
        guard let vault else { throw .init(.notSupported, "no vault to keep a new collection in") }
        var label = ""
        for (key, value) in properties.stringKeyedEntries ?? [] where key == "org.freedesktop.Secret.Collection.Label" {
            guard let text = value.variantContents?.string, text.utf8.count <= Self.textLimit else {
                throw .init(.invalidArgs, "\(key) is a string of at most \(Self.textLimit) bytes")
            }
            label = text
        }
        guard collections.count < CollectionRegistry.limit else { throw .init(.limitsExceeded, "this vault already has \(CollectionRegistry.limit) collections") }
        let name = ServedItems.collectionName(label: label, taken: Set(collections.names).union(["session", "login"]))
        let collection = VaultCollection(name: name, label: label, store: vault)
        try collection.setLabel(label)
        collections.add(collection)
        forgetStoredAliases(naming: name)
        if !alias.isEmpty {
            try keepAlias(alias, naming: name)
            collections.setAlias(alias, to: name)
        }
        emit(ObjectPath.root, ServiceInterface.name, "CollectionCreated", [.objectPath(ObjectPath.collectionPath(name))])
        propertiesChanged(ObjectPath.root, ServiceInterface.name, [], invalidated: ["Collections"])
        return [.objectPath(ObjectPath.collectionPath(name)), .objectPath(ObjectPath.none)]
    }

    // MARK: - Aliases kept in the vault

    /// Puts in place what the vault keeps beside the items, once it can be read (a vault locked
    /// since boot cannot: a later call or unlock reads it): the collections `CreateCollection`
    /// made, with their pairs counted (and `login`'s, so that searches read id lists from then
    /// on), then the aliases kept there (``StoredAliases``) that name a collection served.
    func loadVaultContents() {
        // Asked at every call until it succeeds: a vault still locked since boot is told by its
        // keys in memory, without a read of the file.
        guard let vault, !vaultContentsLoaded, vault.isAvailable(.afterFirstUnlock), let stored = try? StoredAliases.load(from: vault),
            let created = try? VaultCollection.createdCollectionNames(in: vault)
        else { return }
        vaultContentsLoaded = true
        // A name served already stays as it is (the synchronized collection named `sync` while
        // a created `sync` could not be read: that one comes back at the next start).
        for name in created where !collections.contains(name) && name != "login" && name != "session" {
            collections.add(VaultCollection(name: name, label: "", store: vault))
            emit(ObjectPath.root, ServiceInterface.name, "CollectionCreated", [.objectPath(ObjectPath.collectionPath(name))])
        }
        for collection in collections.vaultCollections { collection.countPairsIfNeeded() }
        for (alias, name) in stored.sorted(by: { $0.key < $1.key }) { collections.setAlias(alias, to: name) }
    }

    /// Keeps `alias` naming `name` in the vault (a collection of the vault only; an alias of
    /// the in-memory collection lasts as long as it does), or, with nil, removes it.
    /// - Throws: the vault's error (`IsLocked` for a vault locked since boot): the alias is
    ///   then left as it was, in memory too.
    private func keepAlias(_ alias: String, naming name: String?) throws(ServiceError) {
        guard let vault, StoredAliases.isKept(alias) else { return }
        do throws(StoreError) {
            if let name, collections.named(name) is VaultCollection {
                try StoredAliases.set(alias, to: name, in: vault)
            } else {
                try StoredAliases.remove(alias, from: vault)
            }
        } catch {
            throw ServiceError(error, path: "\(ObjectPath.root)/aliases/\(alias)")
        }
    }

    /// Removes the rows of aliases that named an earlier collection of this name (deleted
    /// since), so that they do not come back at the next start naming the new one.
    private func forgetStoredAliases(naming name: String) {
        guard let vault, let stored = try? StoredAliases.load(from: vault) else { return }
        for (alias, named) in stored where named == name && collections.aliases[alias] != name { try? StoredAliases.remove(alias, from: vault) }
    }

    /// A search's or an item's attributes: an `a{ss}` within the daemon's limits.
    func checkedAttributes(_ value: BusValue) throws(ServiceError) -> [String: String] {
        guard let map = value.stringMap else { throw .init(.invalidArgs, "attributes are a dictionary of strings (a{ss}) with each name once") }
        guard map.count <= Self.attributeLimit else { throw .init(.limitsExceeded, "more than \(Self.attributeLimit) attributes") }
        for (name, text) in map where name.utf8.count > Self.textLimit || text.utf8.count > Self.textLimit {
            throw .init(.limitsExceeded, "an attribute name or value is longer than \(Self.textLimit) bytes")
        }
        return map
    }
}
