import FoundationEssentials

/// The store the library faces (Valet, Locksmith, UICKeyChainStore) use when a program names
/// none: the one `KEYCHAIN_BACKEND` names (`vault`, the default, or `secret-service`), the vault
/// at its default location (`KEYCHAIN_PATH`, or `$XDG_DATA_HOME/keychain/default.keychain`).
///
/// A program may set another store for the whole process with ``setDefault(_:)``, or for the
/// work inside a closure with ``withStore(_:_:)`` (a task-local choice, handy in tests).
public enum DefaultStore {
    @TaskLocal static var override: (any Store)?

    private static let lock = Lock()
    nonisolated(unsafe) private static var processDefault: (any Store)?

    /// Sets the store used from now on, in every task without an override.
    public static func setDefault(_ store: any Store) {
        lock.withLock { processDefault = store }
    }

    /// Runs `body` with `store` as the default of this task.
    public static func withStore<R>(_ store: any Store, _ body: () throws -> R) rethrows -> R {
        try $override.withValue(store, operation: body)
    }

    /// The task's override, the process default, or the store `KEYCHAIN_BACKEND` names (the
    /// vault by default), opened on first use.
    /// - Throws: the store's error when it cannot be opened.
    public static func current() throws(StoreError) -> any Store {
        if let override { return override }
        lock.lock()
        defer { lock.unlock() }
        if let processDefault { return processDefault }
        let store = try StoreKind.fromEnvironment().open()
        processDefault = store
        return store
    }

    /// The store chosen so far, without opening the default vault: nil until one is set or opened.
    public static var chosen: (any Store)? {
        if let override { return override }
        return lock.withLock { processDefault }
    }

    /// A key naming a chosen store (or the default), for the faces' instance caches.
    public static func identity(of store: (any Store)?) -> String {
        store.map { "\(ObjectIdentifier($0).hashValue)" } ?? "default"
    }
}
