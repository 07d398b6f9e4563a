import Foundation
import KeychainCore

/// Chooses the store behind Valets without changing Valet's API.
///
/// By default every Valet uses the store `KEYCHAIN_BACKEND` names (`vault`, the default, or
/// `secret-service`); the vault lives at its default location (`KEYCHAIN_PATH`, or
/// `$XDG_DATA_HOME/keychain/default.keychain`). A program may set another store for the whole
/// process with ``setDefault(_:)`` before creating Valets, or for the Valets created inside a
/// closure with ``withStore(_:_:)`` (a task-local choice, handy in tests). A Valet keeps the
/// store it was created with; data never moves between stores by itself.
public enum ValetStore {
    @TaskLocal static var override: (any Store)?

    private static let lock = NSLock()
    nonisolated(unsafe) private static var processDefault: (any Store)?

    /// Sets the store used by Valets created from now on, in every task without an override.
    public static func setDefault(_ store: any Store) {
        lock.lock()
        defer { lock.unlock() }
        processDefault = store
    }

    /// Runs `body` with Valets created inside it (on this task) using `store`.
    public static func withStore<R>(_ store: any Store, _ body: () throws -> R) rethrows -> R {
        try $override.withValue(store, operation: body)
    }

    /// The store a Valet created now would use: the task's override, the process default, or
    /// the store `KEYCHAIN_BACKEND` names (the vault by default), opened on first use.
    public static func current() throws(StoreError) -> any Store {
        if let override { return override }
        lock.lock()
        defer { lock.unlock() }
        if let processDefault { return processDefault }
        let store = try StoreKind.fromEnvironment().open()
        processDefault = store
        return store
    }

    /// The store chosen so far for a Valet created now, without opening the default vault.
    static var chosen: (any Store)? {
        if let override { return override }
        lock.lock()
        defer { lock.unlock() }
        return processDefault
    }

    /// A key naming the store, for the instance cache.
    static func identity(of store: (any Store)?) -> String {
        store.map { "\(ObjectIdentifier($0).hashValue)" } ?? "default"
    }
}
