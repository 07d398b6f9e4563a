import KeychainCore
internal import KeychainSystem

/// The Secret Service daemon: owns `org.freedesktop.secrets` on the session bus and answers
/// the specification's five interfaces (one file each: `Interfaces/`) over its collections.
///
/// One thread runs it, the bus's: handlers run one at a time and keep no lock. Every call is
/// answered, a bad one with the specification's error, and no input stops the daemon.
final class SecretServiceDaemon {
    static let busName = "org.freedesktop.secrets"

    /// The most attribute pairs one item or search may carry, and bytes of a name, value or label.
    static let attributeLimit = 256
    static let textLimit = 16_384

    /// The connection replies and signals go out on; none when the handlers are driven
    /// without a bus (the fuzz target), and signals then go nowhere.
    let bus: BusConnection?
    /// The vault behind the persistent collections, for `Lock`.
    let vault: Vault?
    /// The collections served and their aliases.
    var collections: CollectionRegistry
    /// The clients' open sessions.
    var sessions = SessionTable()
    /// The prompts handed out and the unlock dialog they wait on.
    var prompts = PromptTable()
    /// The pinentry a prompt shows to unlock the vault; nil when none can be shown.
    let pinentry = PinentryChoice.choose(environment: ProcessEnvironment.current)
    /// Whether the collections and aliases kept in the vault have been read (they cannot be
    /// while the vault is locked since boot: ``loadVaultContents()``).
    var vaultContentsLoaded = false
    /// When the daemon last answered a call (not when a client left: every program leaving the
    /// bus says so, whether it ever called the daemon or not).
    private(set) var lastActivity = ContinuousClock.now
    /// What clients were last told of the vault's lock state (``followLockState(at:)``).
    var lockAnnouncement = LockAnnouncement()
    /// The unlock the daemon's pinentry made that only the daemon can end (``OwnUnlock``).
    var ownUnlock: OwnUnlock?

    /// Whether no client holds anything of the daemon's: no session open, no prompt handed out,
    /// no dialog showing (what an activated daemon waits for before it exits when idle).
    var holdsNothing: Bool { sessions.isEmpty && prompts.isEmpty }

    init(bus: BusConnection?, vault: Vault?, collections: [any SecretCollection], defaultCollection: String) {
        self.bus = bus
        self.vault = vault
        self.collections = CollectionRegistry(collections)
        self.collections.setAlias("default", to: defaultCollection)
        loadVaultContents()
        // The state clients find at start, to tell them from here on what changes.
        announceLockChanges()
    }

    // MARK: - Dispatch

    /// One call, in and out: what sd-bus hands the handler of the object tree.
    func handle(_ message: BusMessage) -> Int32 {
        guard message.isMethodCall, let bus else { return 0 }
        lastActivity = .now
        do {
            let reply = try OutgoingMessage.reply(to: message)
            let (values, sensitive) = try dispatch(message)
            if sensitive { reply.markSensitive() }
            try reply.append(values)
            bus.send(reply)
        } catch {
            if let reply = try? OutgoingMessage.error(error, to: message) { bus.send(reply) }
        }
        return 1
    }

    /// The call's reply values, and whether they carry a secret.
    private func dispatch(_ message: BusMessage) throws(ServiceError) -> ([BusValue], Bool) {
        try respond(
            to: IncomingCall(
                path: message.path, interface: message.interface, member: message.member, signature: message.signature, sender: message.sender,
                arguments: { () throws(ServiceError) in try message.arguments() }))
    }

    /// The reply values of one call, and whether they carry a secret: every check and every
    /// handler, with nothing of sd-bus but the call's arguments, read once its signature passed.
    func respond(to message: IncomingCall) throws(ServiceError) -> ([BusValue], Bool) {
        // The first call after the user unlocked a vault locked since boot sees all it holds.
        if !vaultContentsLoaded { loadVaultContents() }
        guard let object = ObjectPath(message.path) else { throw .noSuchObject(message.path) }
        let interfaces = try interfaces(of: object)
        var interface = message.interface
        let member = message.member
        if interface == IntrospectableInterface.name || (interface.isEmpty && member == "Introspect") {
            guard member == "Introspect" else { throw .unknownMethod(IntrospectableInterface.name, member) }
            guard message.signature.isEmpty else { throw .init(.invalidArgs, "Introspect takes no arguments") }
            return ([.string(IntrospectableInterface.description(of: interfaces))], false)
        }
        if interface.isEmpty {
            // A call may leave the interface out: the object's interface with that method takes it.
            interface = interfaces.first { Self.methods[$0]?[member] != nil } ?? Self.propertiesInterface
        }
        // Properties answers on every object (with nothing, where the object has none).
        guard interface == Self.propertiesInterface || interfaces.contains(interface), let method = Self.methods[interface]?[member] else {
            throw .unknownMethod(interface, member)
        }
        let given = message.signature
        guard given == method.arguments else {
            throw .init(.invalidArgs, "\(interface).\(member) takes arguments of signature '\(method.arguments)', not '\(given)'")
        }
        let call = Call(object: object, path: message.path, sender: message.sender, arguments: try message.arguments(), interfaces: interfaces)
        return (try method.handle(self, call), method.carriesSecret)
    }

    /// The interfaces the object answers; `NoSuchObject` for one that does not exist.
    private func interfaces(of object: ObjectPath) throws(ServiceError) -> [String] {
        switch object {
        case .service: return [ServiceInterface.name, IdentityInterface.name, Self.propertiesInterface]
        case .collection:
            let synchronized = (try collection(object) as? VaultCollection)?.synchronizes == true
            return [CollectionInterface.name] + (synchronized ? [SyncCollectionInterface.name] : []) + [Self.propertiesInterface]
        case .item(_, _, let id):
            _ = try collection(object).record(id)
            return [ItemInterface.name, Self.propertiesInterface]
        case .session(let id):
            guard sessions.contains(ObjectPath.sessionPath(id)) else { throw .noSuchObject(ObjectPath.sessionPath(id)) }
            return [SessionInterface.name]
        case .prompt(let id):
            guard prompts.contains(id) else { throw .noSuchObject(ObjectPath.promptPath(id)) }
            return [PromptInterface.name]
        }
    }

    /// The collection an object path names (by name or alias), or the collection of the item it names.
    func collection(_ object: ObjectPath) throws(ServiceError) -> any SecretCollection { try collections.collection(object) }

    /// The collection and item id an argument's path names.
    func item(at path: String) throws(ServiceError) -> (collection: any SecretCollection, id: String) {
        guard let object = ObjectPath(path), case .item(_, _, let id) = object else { throw .noSuchObject(path) }
        return (try collection(object), id)
    }

    /// The session `path` names, if `sender` opened it: a client never uses another's session.
    func session(_ path: String, for sender: String) throws(ServiceError) -> TransferSession {
        try sessions.session(path, for: sender)
    }

    // MARK: - Signals

    /// Sends a signal from `path`; a failure to build one is not the caller's failure.
    func emit(_ path: String, _ interface: String, _ member: String, _ values: [BusValue]) {
        guard let bus, let signal = try? OutgoingMessage.signal(on: bus.pointer, path: path, interface: interface, member: member),
            (try? signal.append(values)) != nil
        else { return }
        bus.send(signal)
    }

    /// `PropertiesChanged` for `properties` of the object at `path`, with their new values, and
    /// for the `invalidated` ones, whose values clients read again when they need them.
    func propertiesChanged(_ path: String, _ interface: String, _ properties: [(String, BusValue)], invalidated: [String] = []) {
        emit(
            path, Self.propertiesInterface, "PropertiesChanged",
            [.string(interface), .properties(properties), .array(element: "s", invalidated.map { .string($0) })])
    }

    /// Closes the sessions of a client that left the bus, and dismisses its prompts.
    func clientLeft(_ name: String) {
        sessions.clientLeft(name)
        prompts.clientLeft(name)?.cancel()
    }
}

/// One method call as it arrives: where it goes, what it says it carries, and a way to read
/// its arguments (only once the signature is found right).
struct IncomingCall {
    let path: String
    let interface: String
    let member: String
    let signature: String
    /// The caller's unique bus name.
    let sender: String
    let arguments: () throws(ServiceError) -> [BusValue]
}

/// One method call, its arguments read and checked against the method's signature.
struct Call {
    let object: ObjectPath
    let path: String
    /// The caller's unique bus name.
    let sender: String
    let arguments: [BusValue]
    /// The interfaces the object answers.
    let interfaces: [String]
}
