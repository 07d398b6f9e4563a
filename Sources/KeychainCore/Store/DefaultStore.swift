import FoundationEssentials
internal import KeychainSystem
import Synchronization

/// The store the library faces (Valet, Locksmith, UICKeyChainStore) use when a program names
/// none: the one `KEYCHAIN_BACKEND` names (`vault`, the default, or `secret-service`), the vault
/// at its default location (`KEYCHAIN_PATH`, or `$XDG_DATA_HOME/keychain/default.keychain`).
///
/// A program may set another store for the whole process with ``setDefault(_:)``, or for the
/// work inside a closure with ``withStore(_:_:)`` (a task-local choice, handy in tests).
public enum DefaultStore {
    @TaskLocal static var override: (any Store)?

    /// The process default and how it came to be, changed together under one lock.
    private struct ProcessDefault {
        var store: (any Store)?
        /// Whether ``store`` was opened on first use (rather than set by the program): it is
        /// then the same "default" the faces named before it was opened.
        var openedOnFirstUse = false
    }
    private static let processDefault = Mutex(ProcessDefault())

    /// Sets the store used from now on, in every task without an override.
    public static func setDefault(_ store: any Store) {
        processDefault.withLock { $0 = ProcessDefault(store: store) }
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
        return try processDefault.withLock { (chosen) throws(StoreError) -> any Store in
            if let store = chosen.store { return store }
            let environment = ProcessEnvironment.current
            let store = try StoreKind.fromEnvironment(environment).open(environment: environment)
            chosen = ProcessDefault(store: store, openedOnFirstUse: true)
            return store
        }
    }

    /// The store chosen so far, without opening the default vault: nil until one is set or opened.
    package static var chosen: (any Store)? {
        if let override { return override }
        return processDefault.withLock { $0.store }
    }

    /// A key naming a chosen store (or the default), for the faces' instance caches: the same
    /// before and after the default store is opened on first use, so that equal configurations
    /// give the identical instance whenever they are made.
    package static func identity(of store: (any Store)?) -> String {
        guard let store else { return "default" }
        let isDefault = processDefault.withLock { $0.openedOnFirstUse && $0.store === store }
        return isDefault ? "default" : "\(ObjectIdentifier(store).hashValue)"
    }
}
