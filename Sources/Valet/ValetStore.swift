import KeychainCore
import ValetNaming

/// Chooses the store behind Valets without changing Valet's API: the library-wide
/// `KeychainCore.DefaultStore` under Valet's name.
///
/// By default every Valet uses the store `KEYCHAIN_BACKEND` names (`vault`, the default, or
/// `secret-service`); the vault lives at its default location (`KEYCHAIN_PATH`, or
/// `$XDG_DATA_HOME/keychain/default.keychain`). A program may set another store for the whole
/// process with ``setDefault(_:)`` before creating Valets, or for the Valets created inside a
/// closure with ``withStore(_:_:)`` (a task-local choice, handy in tests). A Valet keeps the
/// store it was created with; data never moves between stores by itself.
public enum ValetStore {
    /// Sets the store used by Valets created from now on, in every task without an override.
    public static func setDefault(_ store: any Store) { DefaultStore.setDefault(store) }

    /// Runs `body` with Valets created inside it (on this task) using `store`.
    public static func withStore<R>(_ store: any Store, _ body: () throws -> R) rethrows -> R {
        try DefaultStore.withStore(store, body)
    }

    /// The store a Valet created now would use, opened on first use.
    public static func current() throws(StoreError) -> any Store { try DefaultStore.current() }

    static var chosen: (any Store)? { DefaultStore.chosen }

    static func identity(of store: (any Store)?) -> String { DefaultStore.identity(of: store) }
}
