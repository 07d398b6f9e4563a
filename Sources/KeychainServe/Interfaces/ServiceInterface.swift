import KeychainCore

/// `org.freedesktop.Secret.Service`, on `/org/freedesktop/secrets`.
enum ServiceInterface {
    static let name = "org.freedesktop.Secret.Service"
}

extension SecretServiceDaemon {
    func serviceCall(_ member: String, _ call: Call) throws(ServiceError) -> ([BusValue], Bool) {
        let a = call.arguments
        switch member {
        case "OpenSession":
            return (try openSession(algorithm: a[0].string!, input: a[1].variantContents!, sender: call.sender), false)
        case "SearchItems":
            let attributes = try checkedAttributes(a[0])
            var unlocked: [String] = [], locked: [String] = []
            for name in collectionOrder {
                guard let collection = collections[name] else { continue }
                let paths = try collection.search(attributes).map { ObjectPath.itemPath(name, $0) }
                if collection.isLocked { locked += paths } else { unlocked += paths }
            }
            return ([.paths(unlocked), .paths(locked)], false)
        case "Unlock":
            return (try unlock(a[0].pathList!), false)
        case "Lock":
            return (try lock(a[0].pathList!), false)
        case "GetSecrets":
            let session = try session(a[1].objectPath!, for: call.sender)
            var secrets: [BusValue] = []
            for path in Set(a[0].pathList!).sorted() {
                // Items that do not exist, or whose collection is locked, are left out, as the
                // specification's reply maps only the items whose secrets it gives.
                guard let (collection, id) = try? item(at: path), !collection.isLocked, let record = try? collection.record(id),
                    let value = try? collection.secret(id)
                else { continue }
                secrets.append(.entry(.objectPath(path), try session.secretStruct(value, contentType: record.contentType)))
            }
            return ([.array(element: "{o(oayays)}", secrets)], true)
        case "ReadAlias":
            let alias = a[0].string!
            // The vault may have opened since start (`keychain unlock`): its aliases come in now.
            loadVaultContents()
            guard let name = aliases[alias], collections[name] != nil else { return ([.objectPath(ObjectPath.none)], false) }
            return ([.objectPath(ObjectPath.collectionPath(name))], false)
        case "SetAlias":
            let alias = a[0].string!, target = a[1].objectPath!
            guard alias.utf8.count <= 255, !alias.isEmpty, alias.utf8.allSatisfy({ $0 == 95 || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }) else {
                throw .init(.invalidArgs, "an alias is letters, digits and underscores")
            }
            if target == ObjectPath.none {
                try keepAlias(alias, naming: nil)
                aliases[alias] = nil
                return ([], false)
            }
            guard let object = ObjectPath(target), case .collection(let name, false) = object, collections[name] != nil else {
                throw .noSuchObject(target)
            }
            try keepAlias(alias, naming: name)
            aliases[alias] = name
            return ([], false)
        default:  // CreateCollection
            return (try createCollection(properties: a[0], alias: a[1].string!), false)
        }
    }

    private func openSession(algorithm: String, input: BusValue, sender: String) throws(ServiceError) -> [BusValue] {
        guard (sessionsByClient[sender] ?? 0) < Self.sessionsPerClient, sessions.count < Self.sessionLimit else {
            throw .init(.limitsExceeded, "too many open sessions: close some (Session.Close) before opening more")
        }
        let path = ObjectPath.sessionPath(newObjectID())
        let output: BusValue
        switch algorithm {
        case TransferSession.plainName:
            sessions[path] = TransferSession(path: path, owner: sender, algorithm: .plain)
            output = .string("")
        case TransferSession.diffieHellmanName:
            guard let clientPublic = input.bytes else { throw .init(.invalidArgs, "the \(algorithm) session takes the client's public value as a byte array (ay)") }
            let agreed = try DiffieHellman.agree(clientPublic: clientPublic)
            sessions[path] = TransferSession(path: path, owner: sender, algorithm: .diffieHellman(key: agreed.key))
            output = .bytes(SecretBytes(agreed.publicValue))
        default:
            throw .init(.notSupported, "the session algorithm '\(algorithm)' is not supported: use plain or \(TransferSession.diffieHellmanName)")
        }
        sessionsByClient[sender, default: 0] += 1
        return [.variant(output), .objectPath(path)]
    }

    /// The objects of `paths` open now (the user's unlock state is read again); the rest wait
    /// behind a prompt: a pinentry where one can be shown, else the user's own `keychain unlock`
    /// (``PromptInterface``).
    private func unlock(_ paths: [String]) throws(ServiceError) -> [BusValue] {
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
        let id = newObjectID()
        prompts.insert(id)
        return [.paths(unlocked), .objectPath(ObjectPath.promptPath(id))]
    }

    /// Locks the vault for the user, as `keychain lock` does (every process of the user, this
    /// daemon too). A vault without a passphrase cannot be locked: its
    /// objects stay open and are not listed as locked.
    private func lock(_ paths: [String]) throws(ServiceError) -> [BusValue] {
        let named = paths.filter { path in
            guard let object = ObjectPath(path) else { return false }
            switch object {
            case .collection, .item: return (try? collection(object)) is VaultCollection
            default: return false
            }
        }
        guard let vault, vault.hasPassphrase, !named.isEmpty else { return [.paths([]), .objectPath(ObjectPath.none)] }
        vault.lockForUser()
        for name in collectionOrder where collections[name] is VaultCollection {
            propertiesChanged(ObjectPath.collectionPath(name), CollectionInterface.name, [("Locked", .boolean(true))])
        }
        return [.paths(named), .objectPath(ObjectPath.none)]
    }

    /// A new collection of the vault (a scope of its own, see ``VaultCollection``), named after
    /// its label; the collection the alias names when it names one already.
    private func createCollection(properties: BusValue, alias: String) throws(ServiceError) -> [BusValue] {
        if !alias.isEmpty, let name = aliases[alias], collections[name] != nil {
            return [.objectPath(ObjectPath.collectionPath(name)), .objectPath(ObjectPath.none)]
        }
        guard let vault else { throw .init(.notSupported, "no vault to keep a new collection in") }
        var label = ""
        for (key, value) in properties.stringKeyedEntries ?? [] where key == "org.freedesktop.Secret.Collection.Label" {
            guard let text = value.variantContents?.string, text.utf8.count <= Self.textLimit else {
                throw .init(.invalidArgs, "\(key) is a string of at most \(Self.textLimit) bytes")
            }
            label = text
        }
        guard collections.count < 64 else { throw .init(.limitsExceeded, "this vault already has 64 collections") }
        let name = ServedItems.collectionName(label: label, taken: Set(collections.keys).union(["session", "login"]))
        let collection = VaultCollection(name: name, label: label, store: vault)
        try collection.setLabel(label)
        collections[name] = collection
        collectionOrder.append(name)
        forgetStoredAliases(naming: name)
        if !alias.isEmpty {
            try keepAlias(alias, naming: name)
            aliases[alias] = name
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
        for name in created where collections[name] == nil && name != "login" && name != "session" {
            collections[name] = VaultCollection(name: name, label: "", store: vault)
            collectionOrder.append(name)
            emit(ObjectPath.root, ServiceInterface.name, "CollectionCreated", [.objectPath(ObjectPath.collectionPath(name))])
        }
        for name in collectionOrder { (collections[name] as? VaultCollection)?.countPairsIfNeeded() }
        for (alias, name) in stored.sorted(by: { $0.key < $1.key }) where collections[name] != nil { aliases[alias] = name }
    }

    /// Keeps `alias` naming `name` in the vault (a collection of the vault only; an alias of
    /// the in-memory collection lasts as long as it does), or, with nil, removes it.
    /// - Throws: the vault's error (`IsLocked` for a vault locked since boot): the alias is
    ///   then left as it was, in memory too.
    private func keepAlias(_ alias: String, naming name: String?) throws(ServiceError) {
        guard let vault, StoredAliases.isKept(alias) else { return }
        do throws(StoreError) {
            if let name, collections[name] is VaultCollection {
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
        for (alias, named) in stored where named == name && aliases[alias] != name { try? StoredAliases.remove(alias, from: vault) }
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
