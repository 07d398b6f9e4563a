#if canImport(Glibc)
    import Glibc
#endif

/// A locked collection of the provider on the bus, unlocked headless with its password through
/// gnome-keyring's own interface (`UnlockWithMasterPassword` of
/// `org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface`, what its unlock screen uses):
/// on a server there is no desktop to show the prompt that `Unlock` asks for.
///
/// Every call goes to the owner by its unique name (nothing is started), over a `plain`
/// session of this process's own, on the session bus only this user reaches.
package enum ProviderCollectionUnlock {
    /// One locked collection: its object path and label.
    package struct LockedCollection: Sendable, Equatable {
        /// Its D-Bus object path.
        package let path: String
        /// Its `Label`, to name it to the user.
        package let label: String
    }

    static let gnomeKeyringInterface = "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface"

    /// The owner's locked collections, the one the `session` alias names left out (kept in
    /// memory, never locked by a password).
    /// - Throws: ``StoreError/unavailable(_:)`` without a session bus, or when the owner does
    ///   not list its collections.
    package static func lockedCollections(of owner: SecretServiceOwner, timeout: Duration = .seconds(5)) throws(StoreError) -> [LockedCollection] {
        let bus = try SessionBus(timeout: timeout)
        let library = bus.library
        let paths: [String]? = bus.property(of: owner.uniqueName, "org.freedesktop.Secret.Service", "Collections", at: "/org/freedesktop/secrets") { list in
            (0..<library.variantNChildren(list)).compactMap { index in
                let child = library.variantGetChildValue(list, index)
                defer { library.variantUnref(child) }
                return bus.string(child)
            }
        }
        guard let paths else { throw .unavailable("the Secret Service did not list its collections") }
        var session: String?
        if case .success(let reply) = bus.call(
            owner.uniqueName, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias", values: [library.variantNewString("session")])
        {
            session = bus.first(reply, bus.string)
        }
        return paths.filter { $0 != session }.compactMap { path in
            guard bus.booleanProperty(of: owner.uniqueName, "org.freedesktop.Secret.Collection", "Locked", at: path) == true else { return nil }
            return LockedCollection(path: path, label: bus.stringProperty(of: owner.uniqueName, "org.freedesktop.Secret.Collection", "Label", at: path) ?? "")
        }
    }

    /// Unlocks `collection` with `password`.
    /// - Throws: ``StoreError/unavailable(_:)`` when the provider has no such interface (only
    ///   gnome-keyring has), ``StoreError/authenticationFailed`` when the collection stays
    ///   locked (a wrong password).
    package static func unlock(_ collection: LockedCollection, of owner: SecretServiceOwner, password: SecretBytes, timeout: Duration = .seconds(5)) throws(StoreError) {
        let bus = try SessionBus(timeout: timeout)
        let library = bus.library
        let opened = bus.call(
            owner.uniqueName, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession",
            values: [library.variantNewString("plain"), library.variantNewVariant(library.variantNewString(""))])
        guard case .success(let reply) = opened else { throw .unavailable("the Secret Service opened no session to unlock '\(collection.label)'") }
        defer { library.variantUnref(reply) }
        let sessionValue = library.variantGetChildValue(reply, 1)
        defer { library.variantUnref(sessionValue) }
        guard let session = bus.string(sessionValue) else { throw .unavailable("the Secret Service opened no session to unlock '\(collection.label)'") }
        defer {
            if case .success(let closed) = bus.call(owner.uniqueName, session, "org.freedesktop.Secret.Session", "Close", values: []) { library.variantUnref(closed) }
        }
        let secret = password.withUnsafeBytes { bytes in
            var parts: [LibSecret.Pointer?] = [
                library.variantNewObjectPath(session), library.variantNewFixedArray("y", nil, 0, 1),
                library.variantNewFixedArray("y", bytes.baseAddress, bytes.count, 1), library.variantNewString("text/plain"),
            ]
            return parts.withUnsafeMutableBufferPointer { library.variantNewTuple($0.baseAddress, $0.count) }
        }
        let unlocked = bus.call(
            owner.uniqueName, "/org/freedesktop/secrets", gnomeKeyringInterface, "UnlockWithMasterPassword",
            values: [library.variantNewObjectPath(collection.path), secret])
        switch unlocked {
        case .success(let done): library.variantUnref(done)
        case .failure(let error):
            if error.message.contains("UnknownMethod") || error.message.contains("UnknownInterface") || error.message.contains("UnknownObject") {
                throw .unavailable("the Secret Service on this bus has no password unlock (gnome-keyring's); unlock '\(collection.label)' in its own way")
            }
        }
        guard bus.booleanProperty(of: owner.uniqueName, "org.freedesktop.Secret.Collection", "Locked", at: collection.path) == false else {
            throw .authenticationFailed
        }
    }

    /// Unlocks `collection` through the Secret Service's own `Unlock` and its prompt, which
    /// the provider answers in its own way: kwalletd opens a wallet pam_kwallet opened at login
    /// (or one of an empty password) without asking, and asks for any other's password in its
    /// own window. Waits up to `wait` for the collection to be unlocked.
    /// - Throws: ``StoreError/unavailable(_:)`` when the provider refuses the call,
    ///   ``StoreError/userCancelled`` when the collection is still locked after `wait` (its
    ///   prompt is dismissed then).
    package static func unlockThroughService(_ collection: LockedCollection, of owner: SecretServiceOwner, wait: Duration, timeout: Duration = .seconds(5)) throws(StoreError) {
        let bus = try SessionBus(timeout: timeout)
        let library = bus.library
        let objects = collection.path.withCString { path in
            var paths: [UnsafePointer<CChar>?] = [path]
            return library.variantNewObjv(&paths, 1)
        }
        let asked = bus.call(owner.uniqueName, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "Unlock", values: [objects])
        guard case .success(let reply) = asked else {
            if case .failure(let error) = asked { throw .unavailable("the Secret Service did not unlock '\(collection.label)': \(error.message)") }
            return
        }
        let promptValue = library.variantGetChildValue(reply, 1)
        let prompt = bus.string(promptValue) ?? "/"
        library.variantUnref(promptValue)
        library.variantUnref(reply)
        if prompt != "/",
            case .success(let shown) = bus.call(owner.uniqueName, prompt, "org.freedesktop.Secret.Prompt", "Prompt", values: [library.variantNewString("")])
        {
            library.variantUnref(shown)
        }
        // The prompt's Completed signal is not listened for: the collection's Locked property
        // says the same, asked until it changes.
        let deadline = ContinuousClock.now + wait
        while bus.booleanProperty(of: owner.uniqueName, "org.freedesktop.Secret.Collection", "Locked", at: collection.path) != false {
            guard ContinuousClock.now < deadline else {
                if prompt != "/", case .success(let dismissed) = bus.call(owner.uniqueName, prompt, "org.freedesktop.Secret.Prompt", "Dismiss", values: []) {
                    library.variantUnref(dismissed)
                }
                throw .userCancelled
            }
            usleep(50_000)
        }
    }
}
