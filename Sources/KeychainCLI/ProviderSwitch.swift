import FoundationEssentials
import KeychainCore
import KeychainServe
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain migrate --foreign`: every item of the Secret Service provider (gnome-keyring,
/// KWallet, KeePassXC) into the vault as `keychain serve` keeps them, or back, so that a user
/// switches providers losing nothing.
enum ProviderSwitch {
    static func migrate(_ context: Context, from: StoreKind, to: StoreKind, rule: ItemTransfer.ConflictRule) throws(CommandFailure) -> ExitCode {
        if context.arguments.has("switch") {
            return from == .secretService ? try ProviderHandover.intoServe(context, rule: rule) : try ProviderHandover.backFromServe(context, rule: rule)
        }
        var stored = Set<String>()
        return try move(context, from: from, to: to, rule: rule, storedSinceListing: &stored)
    }

    /// Moves every item one way. Into the vault, with a switch's `watch` of the provider,
    /// `storedSinceListing` gets the object paths of every item the provider said it stored
    /// from its listing on; none of them is deleted from it, since the vault holds the version
    /// listed, not the one stored after (gnome-keyring signals a store over an item's
    /// attributes as the creation of the item at its path). `provider` is the bus name the
    /// provider is called at (a switch gives the old provider's unique name); nil, the name
    /// libsecret calls by default.
    static func move(
        _ context: Context, from: StoreKind, to: StoreKind, rule: ItemTransfer.ConflictRule, provider busName: String? = nil, watch: ProviderActivityWatch? = nil,
        storedSinceListing: inout Set<String>
    ) throws(CommandFailure) -> ExitCode {
        let timeout: Duration
        do {
            timeout = try SecretServiceStore.Configuration.timeout(in: context.environment) ?? SecretServiceStore.Configuration().timeout
        } catch {
            throw CommandFailure(error)
        }
        let vault = try context.vault()
        // Asked before the provider is called, and again after its listing (which may have
        // started one by D-Bus activation: keychain serve of this vault, once installed).
        let owner = try refuseServingThisVault(vault, addressing: busName, timeout: timeout)
        let provider: SecretServiceProviderContents
        do {
            provider = try SecretServiceProviderContents(timeout: timeout, program: owner?.program ?? .unknown, busName: busName)
        } catch {
            throw CommandFailure(error)
        }
        // A switch lists again after this move: libsecret must not answer from this one's proxies.
        defer { provider.disconnect() }
        try context.ensureAvailable(.whenUnlocked)
        if context.arguments.has("unlock") { try unlockProvider(context, addressing: busName, timeout: timeout) }
        return from == .secretService
            ? try intoVault(context, provider, vault, rule, watch: watch, storedSinceListing: &storedSinceListing) : try outOfVault(context, provider, vault, rule)
    }

    // MARK: - Provider to vault

    private static func intoVault(
        _ context: Context, _ provider: SecretServiceProviderContents, _ vault: Vault, _ rule: ItemTransfer.ConflictRule, watch: ProviderActivityWatch?,
        storedSinceListing: inout Set<String>
    ) throws(CommandFailure) -> ExitCode {
        // What the provider stored before this listing, the listing reads.
        _ = watch?.takeStored()
        let collections = try context.store { () throws(StoreError) in try provider.collections(readingSecrets: true) }
        try refuseServingThisVault(vault, addressing: provider.busName, timeout: provider.timeout)
        let persistent = collections.filter { !$0.isMemoryOnly }
        let locked = persistent.filter(\.isLocked)
        if !locked.isEmpty && !context.arguments.has("skip-locked") {
            throw CommandFailure(
                "\(locked.count) collection(s) of the Secret Service are locked (\(locked.map { "'\($0.label)'" }.joined(separator: ", ")), \(Self.lockedItems(locked))): unlock them first (\(Self.unlockHint(provider.program))), or give --skip-locked to leave them behind; nothing was moved",
                code: .locked)
        }
        let groups = persistent.filter { !$0.isLocked }.map { collection in
            ServedItems.Group(
                label: collection.label, isDefault: collection.isDefault,
                entries: collection.items.map { item in
                    ServedItems.Entry(
                        source: item.path, label: item.label, attributes: item.attributes, secret: item.secret ?? SecretBytes([]), contentType: item.contentType,
                        created: item.created, modified: item.modified)
                })
        }
        let plan = try context.store { () throws(StoreError) in try ServedItems.planImport(groups, into: vault, rule: rule) }
        if plan.conflicts > 0 {
            throw CommandFailure(
                "\(plan.conflicts) item(s) have exactly the attributes of an item already in their vault collection; nothing was moved: add --conflict keep to keep the vault's, or --conflict replace to take the provider's",
                code: .failure)
        }
        do {
            try ServedItems.commit(plan, to: vault)
        } catch {
            throw CommandFailure("\(error.description) Nothing was moved.", code: ExitCode(error))
        }
        let verb = context.arguments.has("keep-source") ? "copied" : "moved"
        context.terminal.writeError(
            "keychain: \(verb) \(plan.added + plan.replaced) item(s) of \(groups.count) collection(s) from the Secret Service into the vault: \(plan.added) added, \(plan.replaced) replaced, \(plan.kept) kept as they were in the vault\(plan.kept > 0 ? " (their copies stay in the Secret Service)" : "")\(plan.createdCollections.isEmpty ? "" : "; new vault collection(s): \(plan.createdCollections.map { "'\($0)'" }.joined(separator: ", "))")\n"
        )
        if plan.alreadyThere > 0 {
            context.terminal.writeError("keychain: \(plan.alreadyThere) item(s) were in the vault already, as they are (an earlier move that stopped before the end)\n")
        }
        if !plan.sharingIdentity.isEmpty {
            context.terminal.writeError(
                "keychain: \(plan.sharingIdentity.count) item(s) have the attributes of another item of their collection (\(plan.sharingIdentity.prefix(5).map { "'\($0)'" }.joined(separator: ", "))\(plan.sharingIdentity.count > 5 ? ", ..." : "")): each is kept as an item of its own, as the provider had them\n"
            )
        }
        reportLeftBehind(collections, context)
        let keepSource = context.arguments.has("keep-source")
        guard !keepSource || watch != nil else { return .success }
        // Only what the vault is read to hold now leaves the provider.
        let held = ServedItems.held(plan, in: vault)
        var stayed: [String] = [], storedOver: [String] = []
        if let watch {
            // An item stored over since it was listed holds what the vault lacks: it stays.
            // Asked just before each deletion (or, copying, once all are copied), for a program
            // may store while others go; its secret is read again too, since gnome-keyring
            // signals no Item.SetSecret.
            let listedSecrets = Dictionary(collections.flatMap { $0.items.map { ($0.path, $0.secret) } }) { first, _ in first }
            for path in held {
                let secretNow = (try? provider.itemAsShown(at: path))??.secret
                storedSinceListing.formUnion(watch.takeStored())
                if storedSinceListing.contains(path) || (secretNow != nil && secretNow != listedSecrets[path] ?? nil) {
                    storedOver.append(path)
                } else if !keepSource {
                    stayed += provider.deleteItems([path])
                }
            }
        } else {
            stayed = provider.deleteItems(held)
        }
        if !storedOver.isEmpty {
            context.terminal.writeError(
                "keychain: \(storedOver.count) item(s) were stored over in the Secret Service after they were listed (\(storedOver.prefix(5).joined(separator: ", "))\(storedOver.count > 5 ? ", ..." : "")): the vault holds the version listed, and they stay in the provider; run the command again with --conflict replace to take the newer version\n"
            )
            return .failure
        }
        if keepSource { return .success }
        let unconfirmed = plan.moved.count - held.count
        if unconfirmed > 0 {
            context.terminal.writeError(
                "keychain: \(unconfirmed) item(s) could not be read back from the vault after the write: they stay in the Secret Service (run the command again to finish)\n")
        }
        guard stayed.isEmpty else {
            context.terminal.writeError(
                "keychain: \(stayed.count) moved item(s) could not be deleted from the Secret Service: they are in the vault and still in the provider; run the command again to finish (it deletes what the vault holds as it is)\n"
            )
            return .failure
        }
        return unconfirmed > 0 ? .failure : .success
    }

    private static func reportLeftBehind(_ collections: [SecretServiceProviderContents.ProviderCollection], _ context: Context) {
        let memory = collections.filter(\.isMemoryOnly).map(\.items.count).reduce(0, +)
        if memory > 0 {
            context.terminal.writeError("keychain: \(memory) item(s) of the memory-only 'session' collection stayed behind (they end with the provider)\n")
        }
        let locked = collections.filter { $0.isLocked && !$0.isMemoryOnly }
        if !locked.isEmpty {
            let listed = locked.map(\.items.count).reduce(0, +)
            context.terminal.writeError(
                listed > 0
                    ? "keychain: \(listed) item(s) of \(locked.count) locked collection(s) stayed behind (--skip-locked)\n"
                    : "keychain: \(locked.count) locked collection(s) stayed behind with their items (\(lockedItems(locked))) (--skip-locked)\n")
        }
    }

    /// How many items the locked collections hold, where the provider lists them: KeePassXC
    /// lists none while a database is locked.
    private static func lockedItems(_ locked: [SecretServiceProviderContents.ProviderCollection]) -> String {
        let listed = locked.map(\.items.count).reduce(0, +)
        return listed > 0 ? "\(listed) item(s)" : "the provider lists no items while they are locked"
    }

    // MARK: - Vault to provider

    private static func outOfVault(_ context: Context, _ provider: SecretServiceProviderContents, _ vault: Vault, _ rule: ItemTransfer.ConflictRule) throws(CommandFailure)
        -> ExitCode
    {
        let served = try context.store { () throws(StoreError) in try ServedItems.read(from: vault) }.filter { !$0.entries.isEmpty }
        // Secrets too: an item the provider holds as the vault does was moved by an earlier run.
        let listing = try context.store { () throws(StoreError) in try provider.collections(readingSecrets: true) }
        try refuseServingThisVault(vault, addressing: provider.busName, timeout: provider.timeout)
        let persistent = listing.filter { !$0.isMemoryOnly }
        // Where each vault collection goes: an existing collection, or one to create (nil).
        var targets: [(collection: ServedItems.Collection, path: String?)] = []
        var conflicts: [(path: String, replacing: [String])] = []
        var conflictCount = 0
        // Vault items whose exact copy the provider holds (an earlier run stopped before it
        // deleted them from the vault), and the provider's items that answer for them.
        var alreadyThere = Set<String>(), claimed = Set<String>()
        for collection in served {
            let target = collection.isLogin ? persistent.first(where: \.isDefault) : persistent.first { $0.label == collection.label && !$0.isDefault }
            if collection.isLogin && target == nil {
                throw CommandFailure("the Secret Service has no default collection to take the vault's login items; nothing was moved", code: .failure)
            }
            if let target, target.isLocked {
                throw CommandFailure(
                    "the Secret Service's collection '\(target.label)' is locked: unlock it first (\(Self.unlockHint(provider.program))); nothing was moved", code: .locked)
            }
            targets.append((collection, target?.path))
            for entry in collection.entries {
                let same = target?.items.filter { !claimed.contains($0.path) && ServedItems.isSameItem($0.attributes, entry.attributes) } ?? []
                if let copy = same.first(where: { $0.label == entry.label && $0.secret == entry.secret }) {
                    claimed.insert(copy.path)
                    alreadyThere.insert(entry.source)
                } else if !same.isEmpty {
                    conflictCount += 1
                    conflicts.append((entry.source, same.map(\.path)))
                }
            }
        }
        if conflictCount > 0 && rule == .refuse {
            throw CommandFailure(
                "\(conflictCount) item(s) have exactly the attributes of an item already in their Secret Service collection; nothing was moved: add --conflict keep to keep the provider's, or --conflict replace to take the vault's",
                code: .failure)
        }
        let conflicting = Dictionary(conflicts.map { ($0.path, $0.replacing) }) { $0 + $1 }
        var createdCollections: [String] = []
        var createdItems: [String] = []
        var moved: [String] = []
        var replacedItems: [String] = []
        var kept = 0, replaced = 0
        var creating: String?
        var storing: ServedItems.Entry?
        var createdByLabel: [String: String] = [:]
        do throws(StoreError) {
            for (collection, existing) in targets {
                let path: String
                if let existing {
                    path = existing
                } else if let made = createdByLabel[collection.label] {
                    // Two vault collections of one label go to the one collection made for it.
                    path = made
                } else {
                    creating = collection.label
                    path = try provider.createCollection(label: collection.label)
                    creating = nil
                    createdCollections.append(path)
                    createdByLabel[collection.label] = path
                }
                for entry in collection.entries {
                    if alreadyThere.contains(entry.source) {
                        moved.append(entry.source)
                        continue
                    }
                    if let replacing = conflicting[entry.source] {
                        guard rule == .replace else {
                            kept += 1
                            continue
                        }
                        replacedItems += replacing
                        replaced += 1
                    }
                    storing = entry
                    let created = try provider.createItem(in: path, label: entry.label, attributes: entry.attributes, secret: entry.secret, contentType: entry.contentType)
                    createdItems.append(created)
                    try verifyArrival(of: entry, at: created, provider)
                    storing = nil
                    moved.append(entry.source)
                }
            }
        } catch {
            let itemsLeft = provider.deleteItems(createdItems)
            var collectionsLeft = 0
            for path in createdCollections { if (try? provider.deleteCollection(path)) == nil { collectionsLeft += 1 } }
            let undone =
                itemsLeft.isEmpty && collectionsLeft == 0
                ? "what it had created there was deleted again; the vault is unchanged"
                : "\(itemsLeft.count) item(s) and \(collectionsLeft) collection(s) it created there could not be deleted again (copies: the vault is unchanged)"
            let why =
                creating.map {
                    "the Secret Service did not create a collection labelled '\($0)' (its prompt was dismissed, or it makes none: \(error.description)); create one of that label there and run again"
                } ?? error.description + (storing.map { Self.refusal(of: $0, by: provider.program) } ?? "")
            throw CommandFailure("\(why); \(undone)", code: ExitCode(error))
        }
        // The provider's own items the vault's replaced go only once every new one is there.
        let oldLeft = provider.deleteItems(replacedItems)
        let verb = context.arguments.has("keep-source") ? "copied" : "moved"
        context.terminal.writeError(
            "keychain: \(verb) \(moved.count) item(s) of \(targets.count) collection(s) from the vault to the Secret Service: \(moved.count - replaced - alreadyThere.count) added, \(replaced) replaced, \(kept) kept as they were in the Secret Service\(kept > 0 ? " (their copies stay in the vault)" : "")\(createdCollections.isEmpty ? "" : "; \(createdCollections.count) collection(s) created there")\n"
        )
        if !alreadyThere.isEmpty {
            context.terminal.writeError(
                "keychain: \(alreadyThere.count) item(s) were in the Secret Service already, as they are (an earlier move that stopped before the end)\n")
        }
        if let synchronized = try? ServedItems.synchronizedItemCount(in: vault), synchronized > 0 {
            context.terminal.writeError(
                "keychain: \(synchronized) item(s) of the synchronized collection stayed in the vault (they belong to every machine of its sync group; move them into another collection first to take them along)\n"
            )
        }
        var failed = false
        if !oldLeft.isEmpty {
            context.terminal.writeError("keychain: \(oldLeft.count) replaced item(s) of the Secret Service could not be deleted: it holds both versions\n")
            failed = true
        }
        if !context.arguments.has("keep-source") && !moved.isEmpty {
            do throws(StoreError) {
                try ServedItems.delete(moved, from: vault)
            } catch {
                context.terminal.writeError(
                    "keychain: the moved items could not be deleted from the vault (\(error.description)): they are in both places; nothing was lost\n")
                failed = true
            }
        }
        return failed ? .failure : .success
    }

    /// Refuses unless the provider shows the item it created at `path` as it was given: its
    /// label, its secret's bytes and each of its attributes (a provider may show more).
    /// A provider's success is not enough: KeePassXC answers a creation it gave up half-way
    /// (attributes it refuses) with the path of an empty entry.
    private static func verifyArrival(of entry: ServedItems.Entry, at path: String, _ provider: SecretServiceProviderContents) throws(StoreError) {
        let shown = try provider.itemAsShown(at: path)
        var differences: [String] = []
        if let shown {
            if shown.label != entry.label { differences.append("its label") }
            if shown.secret != entry.secret { differences.append("its secret") }
            let attributes = entry.attributes.keys.sorted().filter { shown.attributes[$0] != entry.attributes[$0] }
            if !attributes.isEmpty { differences.append("attribute(s) \(attributes.map { "'\($0)'" }.joined(separator: ", "))") }
        }
        guard shown == nil || !differences.isEmpty else { return }
        let what = shown == nil ? "it is not there" : differences.joined(separator: ", ") + " differ"
        throw .io("\(provider.program.rawValue) did not keep the item '\(entry.label)' as it was given: read back, \(what)\(refusal(of: entry, by: provider.program))")
    }

    /// Which of the item's attributes the provider refuses to be given, said in parentheses;
    /// empty when none.
    private static func refusal(of entry: ServedItems.Entry, by program: SecretServiceProgram) -> String {
        let refused = program.refusedAttributes.filter { entry.attributes[$0] != nil }.sorted()
        return refused.isEmpty ? "" : " (\(program.rawValue) refuses the attribute(s) \(refused.map { "'\($0)'" }.joined(separator: ", ")) of the item '\(entry.label)')"
    }

    /// Unlocks each locked collection of the provider before anything is read
    /// (``ProviderCollectionUnlock``): gnome-keyring's with its password through its own
    /// interface, as a server has no desktop for its prompt (one password read serves every
    /// collection it opens); KWallet's through the Secret Service's `Unlock`, which kwalletd
    /// answers itself. KeePassXC opens its databases only in its own window or interface.
    private static func unlockProvider(_ context: Context, addressing busName: String?, timeout: Duration) throws(CommandFailure) {
        guard let owner = try self.context({ () throws(StoreError) in try SecretServiceOwner.current(addressing: busName, timeout: timeout) }) else {
            throw CommandFailure("nothing owns org.freedesktop.secrets on this bus: start the provider first (--unlock opens its collections)", code: .failure)
        }
        let locked = try self.context { () throws(StoreError) in try ProviderCollectionUnlock.lockedCollections(of: owner, timeout: timeout) }
        if !locked.isEmpty && owner.program == .keepassxc {
            throw CommandFailure(
                "--unlock opens gnome-keyring's collections with their password, and KWallet's through its own prompt; KeePassXC's locked collection(s) (\(locked.map { "'\($0.label)'" }.joined(separator: ", "))) are unlocked \(unlockHint(owner.program)); nothing was moved",
                code: .locked)
        }
        if owner.program == .kwallet {
            // kwalletd asks for a wallet's password itself (or has it from pam_kwallet): none is read here.
            for collection in locked {
                do throws(StoreError) {
                    try ProviderCollectionUnlock.unlockThroughService(collection, of: owner, wait: max(timeout, .seconds(300)), timeout: timeout)
                } catch {
                    throw CommandFailure(
                        "KWallet did not open the wallet '\(collection.label)' (\(error.description)): \(unlockHint(.kwallet)); nothing was moved", code: .locked)
                }
                context.terminal.writeError("keychain: unlocked the Secret Service's collection '\(collection.label)' (KWallet's wallet)\n")
            }
            return
        }
        var password: SecretBytes?
        for collection in locked {
            let given: SecretBytes
            if let password {
                given = password
            } else {
                given = try context.passphrases.provider(label: collection.label)
            }
            password = given
            do throws(StoreError) {
                try ProviderCollectionUnlock.unlock(collection, of: owner, password: given, timeout: timeout)
            } catch .authenticationFailed {
                throw CommandFailure("the password does not open the Secret Service's collection '\(collection.label)'; nothing was moved", code: .locked)
            } catch {
                throw CommandFailure("\(error.description) Nothing was moved.", code: ExitCode(error))
            }
            context.terminal.writeError("keychain: unlocked the Secret Service's collection '\(collection.label)'\n")
        }
    }

    /// How to unlock a provider's collection, on a desktop and on a server without one.
    static func unlockHint(_ program: SecretServiceProgram) -> String {
        switch program {
        case .keepassxc:
            "in KeePassXC, which opens its databases only itself: in its window, or headless through its own D-Bus method openDatabase (org.keepassxc.KeePassXC.MainWindow) with the database's file and password"
        case .kwallet:
            "in KWallet: give --unlock, and kwalletd opens the wallet (without asking when pam_kwallet opened it at login, else in its own password window), or open it in KWallet's manager"
        default:
            "on a desktop, in the keyring manager; headless, give --unlock: its password, read as the vault's passphrase is (KEYCHAIN_PROVIDER_PASSWORD_FILE, standard input, or a prompt), opens it through gnome-keyring's own unlock"
        }
    }

    // MARK: - Which provider

    /// Refuses when the provider on the bus is `keychain serve` serving this same vault: moving
    /// its items to itself would delete them. Told by what the bus answers: the name's owner,
    /// and the vault that owner says it serves (``SecretServiceOwner``), which any user may ask
    /// of a daemon of their own; only for a daemon that does not say (an older `keychain
    /// serve`), by its open files where they can be read.
    /// The provider is the one at `busName` (nil: the name libsecret calls by default).
    /// Returns the owner, or nil when nothing owns the name.
    @discardableResult
    static func refuseServingThisVault(_ vault: Vault, addressing busName: String? = nil, timeout: Duration) throws(CommandFailure) -> SecretServiceOwner? {
        guard let owner = try context({ () throws(StoreError) in try SecretServiceOwner.current(addressing: busName, timeout: timeout) }) else { return nil }
        let process = owner.processID.map { "process \($0)" } ?? "bus name \(owner.uniqueName)"
        // A provider of another user on this bus would be given every secret moved back, or
        // would fill the vault with items of its choosing.
        if let user = owner.userID(timeout: timeout), user != getuid() {
            throw CommandFailure(
                "the Secret Service on this bus (\(process)) runs as another user (uid \(user)): nothing is moved to or from it; nothing was moved", code: .failure)
        }
        let serving = owner.servedVault == nil ? owner.processID.map { opensFile(of: vault, $0) } ?? false : owner.serves(vault)
        guard serving else { return owner }
        throw CommandFailure(
            "the Secret Service on this bus is keychain serve (\(process)) serving this same vault: stop it, or give the name back to the old provider (gnome-keyring-daemon --replace), first; nothing was moved",
            code: .failure)
    }

    /// Whether process `pid` has the vault's file open, where its open files can be read.
    private static func opensFile(of vault: Vault, _ pid: Int32) -> Bool {
        guard pid > 0, let own = try? SystemCall.stat(vault.location.path), let names = try? FileSystem.entryNames(in: "/proc/\(pid)/fd") else { return false }
        return names.contains { name in
            guard let open = try? SystemCall.stat("/proc/\(pid)/fd/\(name)") else { return false }
            return open.st_dev == own.st_dev && open.st_ino == own.st_ino
        }
    }

    private static func context<R>(_ body: () throws(StoreError) -> R) throws(CommandFailure) -> R {
        do { return try body() } catch { throw CommandFailure(error) }
    }
}
