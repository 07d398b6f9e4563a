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
    /// Whether ``processDefault`` was opened on first use (rather than set by the program):
    /// it is then the same "default" the faces named before it was opened.
    nonisolated(unsafe) private static var openedOnFirstUse = false

    /// Sets the store used from now on, in every task without an override.
    public static func setDefault(_ store: any Store) {
        lock.withLock {
            processDefault = store
            openedOnFirstUse = false
        }
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
        let environment = ProcessEnvironment.current
        let store = try StoreKind.fromEnvironment(environment).open(environment: environment)
        processDefault = store
        openedOnFirstUse = true
        return store
    }

    /// The store chosen so far, without opening the default vault: nil until one is set or opened.
    public static var chosen: (any Store)? {
        if let override { return override }
        return lock.withLock { processDefault }
    }

    /// A key naming a chosen store (or the default), for the faces' instance caches: the same
    /// before and after the default store is opened on first use, so that equal configurations
    /// give the identical instance whenever they are made.
    public static func identity(of store: (any Store)?) -> String {
        guard let store else { return "default" }
        let isDefault = lock.withLock { openedOnFirstUse && processDefault === store }
        return isDefault ? "default" : "\(ObjectIdentifier(store).hashValue)"
    }
}
