internal import KeychainSystem

/// Who owns `org.freedesktop.secrets` on the session bus, as the bus itself answers
/// (`GetNameOwner`, `GetConnectionUnixProcessID`), and, when the owner is `keychain serve`,
/// the vault it says it serves.
///
/// Asking never starts a provider: the bus is asked about the name, and the owner is called
/// by its unique name (`:1.42`), which D-Bus activation never acts on. So `keychain status`
/// and the checks before `migrate --foreign` and `serve` leave the bus as they found it, and
/// they work as an ordinary user, for whom the daemon's `/proc` entries are closed.
package struct SecretServiceOwner: Sendable, Equatable {
    /// The vault a `keychain serve` on the bus says it serves.
    package struct ServedVault: Sendable, Equatable {
        /// The vault's id (``Vault/identifier``).
        package let identifier: String
        /// The vault file's path as the daemon opened it.
        package let path: String
    }

    /// The interface of `keychain serve`'s own on the service object `/org/freedesktop/secrets`,
    /// whose read-only properties `VaultID` and `VaultPath` name the vault it serves.
    package static let identityInterface = "keychain.Serve"
    /// The bus name of every Secret Service provider.
    package static let busName = "org.freedesktop.secrets"

    /// The owner's unique name on the bus.
    package let uniqueName: String
    /// The owner's process, as the bus reports it; nil when the bus does not say.
    package let processID: Int32?
    /// The vault it serves, when the owner is `keychain serve`; nil for any other provider.
    package let servedVault: ServedVault?
    /// Which program it is, by the names it owns beside the Secret Service's.
    package let program: SecretServiceProgram

    /// The owner of `name` now, or nil when nothing owns it (nothing is started to find out).
    /// - Parameters:
    ///   - name: the bus name asked about: by default the one libsecret calls
    ///     (``addressedName``); a switch gives the old provider's unique name.
    ///   - timeout: the longest each call to the bus or the owner may take.
    /// - Throws: ``StoreError/unavailable(_:)`` without libsecret (whose GLib asks the bus) or
    ///   without a session bus to ask.
    package static func current(addressing name: String? = nil, timeout: Duration = .seconds(2)) throws(StoreError) -> SecretServiceOwner? {
        let bus = try SessionBus(timeout: timeout)
        guard let unique = try bus.nameOwner(of: name ?? addressedName) else { return nil }
        return describe(unique, on: bus)
    }

    /// The name libsecret calls by default: `SECRET_SERVICE_BUS_NAME` where the user's
    /// environment sets it, else ``busName``. A name of the program's own choosing is passed as
    /// a value (``SecretServiceProviderContents/busName``), never left in the environment.
    package static var addressedName: String {
        guard let named = ProcessEnvironment.current["SECRET_SERVICE_BUS_NAME"], !named.isEmpty else { return busName }
        return named
    }

    /// The connections waiting in the bus's queue for ``busName`` behind its owner
    /// (`ListQueuedOwners`), in the order they would get it; empty when none waits.
    /// - Throws: ``StoreError/unavailable(_:)`` without a session bus to ask.
    package static func waiting(timeout: Duration = .seconds(2)) throws(StoreError) -> [SecretServiceOwner] {
        let bus = try SessionBus(timeout: timeout)
        return bus.queuedOwners().dropFirst().map { describe($0, on: bus) }
    }

    private static func describe(_ unique: String, on bus: SessionBus) -> SecretServiceOwner {
        let pid = bus.processID(of: unique)
        var served: ServedVault?
        if let identifier = bus.stringProperty(of: unique, identityInterface, "VaultID"), let path = bus.stringProperty(of: unique, identityInterface, "VaultPath") {
            served = ServedVault(identifier: identifier, path: path)
        }
        let program =
            served != nil ? .keychainServe : SecretServiceProgram.ownNames.first { (try? bus.nameOwner(of: $0.name)) == unique }?.program ?? .unknown
        return SecretServiceOwner(uniqueName: unique, processID: pid, servedVault: served, program: program)
    }

    /// How many connections wait in the bus's queue for ``busName`` behind its owner; 0 when
    /// none does, or the bus does not say.
    package static func waitingCount(timeout: Duration = .seconds(2)) -> Int {
        guard let bus = try? SessionBus(timeout: timeout) else { return 0 }
        return max(bus.queuedOwners().count - 1, 0)
    }

    /// The user id the owner's process runs as, as the bus reports it (`GetConnectionUnixUser`);
    /// nil when the bus does not say.
    package func userID(timeout: Duration = .seconds(2)) -> UInt32? {
        guard let bus = try? SessionBus(timeout: timeout) else { return nil }
        return bus.userID(of: uniqueName)
    }

    /// Asks the owner to quit through its own program's interface, where it has one: KeePassXC's
    /// `appExit` (its window's Quit), which it honours where it now and then leaves a SIGTERM
    /// unanswered. Sent to the unique name, so nothing is started. False when the program has
    /// no such interface or the call failed: the caller then sends a signal.
    package func askToQuit(timeout: Duration = .seconds(5)) -> Bool {
        guard program == .keepassxc, let bus = try? SessionBus(timeout: timeout) else { return false }
        switch bus.call(uniqueName, "/keepassxc", "org.keepassxc.KeePassXC.MainWindow", "appExit", values: []) {
        case .success(let reply):
            bus.library.variantUnref(reply)
            return true
        case .failure: return false
        }
    }

    /// How many items the owner keeps in its memory-only `session` collection (the one its
    /// `session` alias names), which end with its process; nil when it does not say.
    package func memoryOnlyItemCount(timeout: Duration = .seconds(2)) -> Int? {
        guard let bus = try? SessionBus(timeout: timeout), let path = bus.aliasPath(of: uniqueName, "session"), path != "/" else { return nil }
        return bus.property(of: uniqueName, "org.freedesktop.Secret.Collection", "Items", at: path) { bus.library.variantNChildren($0) }
    }

    /// Makes the session bus read its configuration and activation files again
    /// (`ReloadConfig`), so that the next call for a name that has no owner starts what the
    /// activation files say now: the bus otherwise keeps starting the provider it read at its
    /// start when a newer file of the user's names another.
    /// - Throws: ``StoreError/unavailable(_:)`` without a session bus, or when it refuses.
    package static func reloadBusConfiguration(timeout: Duration = .seconds(2)) throws(StoreError) {
        try SessionBus(timeout: timeout).reloadConfiguration()
    }

    /// Whether the owner is `keychain serve` serving `vault`: the same vault id, or the same file.
    package func serves(_ vault: Vault) -> Bool {
        guard let servedVault else { return false }
        if let identifier = vault.identifier, identifier == servedVault.identifier { return true }
        return servedVault.path == vault.location.path
    }

    /// The label of the collection the owner's `default` alias names and whether it is locked,
    /// asked of the owner by its unique name; nil when it names none or does not answer.
    package func defaultCollection(timeout: Duration = .seconds(2)) -> (label: String, locked: Bool)? {
        guard let bus = try? SessionBus(timeout: timeout), let path = bus.defaultCollectionPath(of: uniqueName), path != "/",
            let label = bus.stringProperty(of: uniqueName, "org.freedesktop.Secret.Collection", "Label", at: path),
            let locked = bus.booleanProperty(of: uniqueName, "org.freedesktop.Secret.Collection", "Locked", at: path)
        else { return nil }
        return (label, locked)
    }
}

/// GLib's connection to the session bus (through libsecret's GIO), for calls that never
/// activate a name. Holds its reference to the connection until released.
final class SessionBus {
    let library: LibSecret
    let connection: LibSecret.Pointer
    let timeoutMilliseconds: Int32
    /// `G_BUS_TYPE_SESSION` and `G_DBUS_CALL_FLAGS_NO_AUTO_START`.
    static let sessionBus: Int32 = 2
    static let noAutoStart: Int32 = 1

    init(timeout: Duration) throws(StoreError) {
        library = try LibSecret.shared.get()
        var error: LibSecret.Pointer?
        guard let connection = library.busGetSync(Self.sessionBus, nil, &error) else {
            let why = library.consume(error)?.message ?? "no session bus"
            throw .unavailable("no session bus to ask who serves \(SecretServiceOwner.busName) (\(why))")
        }
        self.connection = connection
        let (seconds, attoseconds) = timeout.components
        timeoutMilliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    deinit { library.objectUnref(connection) }

    /// A call's failure: GLib's message, which carries the D-Bus error's name.
    struct CallFailure: Error {
        let message: String
    }

    /// One call with string arguments; its reply (unref it), or the GError's message.
    private func call(_ destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: [String]) -> Result<LibSecret.Pointer, CallFailure> {
        call(destination, path, interface, method, values: arguments.map { library.variantNewString($0) })
    }

    /// One call whose arguments are GVariants (floating: the call takes them); its reply
    /// (unref it), or the GError's message.
    func call(_ destination: String, _ path: String, _ interface: String, _ method: String, values: [LibSecret.Pointer?]) -> Result<LibSecret.Pointer, CallFailure> {
        var values = values
        let parameters = values.withUnsafeMutableBufferPointer { library.variantNewTuple($0.baseAddress, $0.count) }
        var error: LibSecret.Pointer?
        let reply = library.connectionCallSync(connection, destination, path, interface, method, parameters, nil, Self.noAutoStart, timeoutMilliseconds, nil, &error)
        if let reply { return .success(reply) }
        return .failure(CallFailure(message: library.consume(error)?.message ?? "no reply"))
    }

    /// The first value of a reply, read by `read`, then the reply is released.
    func first<T>(_ reply: LibSecret.Pointer, _ read: (LibSecret.Pointer?) -> T?) -> T? {
        defer { library.variantUnref(reply) }
        let child = library.variantGetChildValue(reply, 0)
        defer { library.variantUnref(child) }
        return read(child)
    }

    func string(_ value: LibSecret.Pointer?) -> String? {
        library.variantGetString(value, nil).map { String(cString: $0) }
    }

    /// The unique name owning `name` (the Secret Service's by default), or nil when none does.
    func nameOwner(of name: String = SecretServiceOwner.busName) throws(StoreError) -> String? {
        switch call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [name]) {
        case .success(let reply): return first(reply, string)
        case .failure(let error):
            if error.message.contains("NameHasNoOwner") { return nil }
            throw .unavailable("the session bus did not say who owns \(name): \(error.message)")
        }
    }

    func reloadConfiguration() throws(StoreError) {
        switch call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReloadConfig", []) {
        case .success(let reply): library.variantUnref(reply)
        case .failure(let error): throw .unavailable("the session bus did not read its configuration again: \(error.message)")
        }
    }

    /// Every connection that asked for ``SecretServiceOwner/busName``: its owner first, then
    /// those waiting in its queue.
    func queuedOwners() -> [String] {
        guard case .success(let reply) = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListQueuedOwners", [SecretServiceOwner.busName])
        else { return [] }
        return first(reply) { list in
            (0..<library.variantNChildren(list)).compactMap { index in
                let child = library.variantGetChildValue(list, index)
                defer { library.variantUnref(child) }
                return string(child)
            }
        } ?? []
    }

    func userID(of unique: String) -> UInt32? {
        guard case .success(let reply) = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixUser", [unique]) else { return nil }
        return first(reply) { library.variantGetUInt32($0) }
    }

    func processID(of unique: String) -> Int32? {
        guard case .success(let reply) = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", [unique]) else {
            return nil
        }
        return first(reply) { Int32(bitPattern: library.variantGetUInt32($0)) }
    }

    /// A property's value (`Properties.Get`), unwrapped from its variant and read by `read`.
    func property<T>(of unique: String, _ interface: String, _ name: String, at path: String, _ read: (LibSecret.Pointer?) -> T?) -> T? {
        guard case .success(let reply) = call(unique, path, "org.freedesktop.DBus.Properties", "Get", [interface, name]) else { return nil }
        return first(reply) { boxed in
            let inner = library.variantGetVariant(boxed)
            defer { library.variantUnref(inner) }
            return read(inner)
        }
    }

    func stringProperty(of unique: String, _ interface: String, _ name: String, at path: String = "/org/freedesktop/secrets") -> String? {
        property(of: unique, interface, name, at: path, string)
    }

    func booleanProperty(of unique: String, _ interface: String, _ name: String, at path: String) -> Bool? {
        property(of: unique, interface, name, at: path) { library.variantGetBoolean($0) != 0 }
    }

    func defaultCollectionPath(of unique: String) -> String? { aliasPath(of: unique, "default") }

    func aliasPath(of unique: String, _ alias: String) -> String? {
        guard case .success(let reply) = call(unique, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias", [alias]) else { return nil }
        return first(reply, string)
    }
}
