import Foundation
import KeychainCore

/// UICKeyChainStore 2.2's class, as Swift code sees its Objective-C API, on KeychainCore: a
/// store for one service (generic passwords) or one server (internet passwords), as easy to
/// use as `UserDefaults`.
///
/// Methods come in the two forms the Objective-C API imports as: one returning `Bool` (or an
/// optional) that reports failure by its result, and one taking `error: ()` that throws an
/// `NSError` in ``UICKeyChainStoreErrorDomain``. A missing item is `nil`, not an error, in the
/// first form. Nothing is ever logged.
///
/// The store behind it is `KeychainCore.DefaultStore` at the time the instance is created
/// (the vault unless the program chose otherwise).
public final class UICKeyChainStore: NSObject, @unchecked Sendable {
    // @unchecked: the mutable configuration below is guarded by `lock`.

    // MARK: Default service

    nonisolated(unsafe) private static var storedDefaultService: String?
    private static let defaultServiceLock = NSLock()

    /// The service of stores made without one: the main bundle's identifier (none on Linux,
    /// so `""`) until ``setDefaultService(_:)``.
    public class func defaultService() -> String {
        defaultServiceLock.withLock { storedDefaultService ?? Bundle.main.bundleIdentifier ?? "" }
    }

    /// Sets the service of stores made without one from now on.
    public class func setDefaultService(_ defaultService: String) {
        defaultServiceLock.withLock { storedDefaultService = defaultService }
    }

    // MARK: Creating stores

    /// A generic-password store for the default service.
    public convenience override init() {
        self.init(service: nil, accessGroup: nil)
    }

    /// A generic-password store for `service` (nil: the default service).
    public convenience init(service: String?) {
        self.init(service: service, accessGroup: nil)
    }

    /// A generic-password store for `service` in `accessGroup` (nil: items of any group are
    /// found, new items have none).
    public init(service: String?, accessGroup: String?) {
        itemClass = .genericPassword
        self.service = service ?? Self.defaultService()
        self.accessGroup = accessGroup
        server = nil
        protocolType = .HTTPS
        authenticationType = .default
        chosenStore = DefaultStore.chosen
        super.init()
    }

    /// An internet-password store for the host (and port) of `server` (its path is ignored).
    public convenience init(server: URL, protocolType: UICKeyChainStoreProtocolType) {
        self.init(server: server, protocolType: protocolType, authenticationType: .default)
    }

    /// An internet-password store for `server` with an authentication scheme.
    public init(server: URL, protocolType: UICKeyChainStoreProtocolType, authenticationType: UICKeyChainStoreAuthenticationType) {
        itemClass = .internetPassword
        service = nil
        accessGroup = nil
        self.server = server
        self.protocolType = protocolType
        self.authenticationType = authenticationType
        chosenStore = DefaultStore.chosen
        super.init()
    }

    // MARK: Configuration

    /// Generic or internet passwords.
    public let itemClass: UICKeyChainStoreItemClass
    /// The service of a generic-password store.
    public let service: String?
    /// The access group of a generic-password store, if any.
    public let accessGroup: String?
    /// The server of an internet-password store.
    public let server: URL?
    /// The protocol of an internet-password store (`.HTTPS`, unused, for a generic-password store).
    public let protocolType: UICKeyChainStoreProtocolType
    /// The authentication scheme of an internet-password store.
    public let authenticationType: UICKeyChainStoreAuthenticationType

    private let lock = NSLock()
    private let chosenStore: (any Store)?
    private var _accessibility = UICKeyChainStoreAccessibility.afterFirstUnlock
    private var _authenticationPolicy: UICKeyChainStoreAuthenticationPolicy?
    private var _useAuthenticationUI = true
    private var _synchronizable = false
    private var _authenticationPrompt: String?

    /// When new and updated items can be read; `.afterFirstUnlock` by default.
    public var accessibility: UICKeyChainStoreAccessibility {
        get { lock.withLock { _accessibility } }
        set { lock.withLock { _accessibility = newValue } }
    }

    /// What reads of items written from now on must prove; nil (none) by default, where the
    /// Objective-C property reads 0, a value the enum has no case for.
    public var authenticationPolicy: UICKeyChainStoreAuthenticationPolicy? { lock.withLock { _authenticationPolicy } }

    /// When false, reads of items behind a policy fail instead of asking (as `kSecUseAuthenticationUIFail`).
    public var useAuthenticationUI: Bool {
        get { lock.withLock { _useAuthenticationUI } }
        set { lock.withLock { _useAuthenticationUI = newValue } }
    }

    /// Whether new and updated items are marked synchronizable (kept apart from local ones; not synchronized anywhere).
    public var synchronizable: Bool {
        get { lock.withLock { _synchronizable } }
        set { lock.withLock { _synchronizable = newValue } }
    }

    /// The reason shown by the presence authenticator when a read needs a proof.
    public var authenticationPrompt: String? {
        get { lock.withLock { _authenticationPrompt } }
        set { lock.withLock { _authenticationPrompt = newValue } }
    }

    /// Sets the accessibility and the authentication policy of items written from now on.
    /// With `.userPresence`, each read asks the presence authenticator for the vault passphrase,
    /// which alone unwraps the item's key (see the README, "User presence").
    public func setAccessibility(_ accessibility: UICKeyChainStoreAccessibility, authenticationPolicy: UICKeyChainStoreAuthenticationPolicy) {
        lock.withLock {
            _accessibility = accessibility
            _authenticationPolicy = authenticationPolicy
        }
    }

    // MARK: Reading

    /// The value for `key` as UTF-8 text; nil if absent, not text, or on any failure.
    public func string(forKey key: String) -> String? {
        try? string(forKey: key, error: ())
    }

    /// The value for `key` as UTF-8 text.
    /// - Throws: an argument error for an empty key, a conversion error (-67594) for bytes that
    ///   are not UTF-8, -25300 when there is no such item (as the Objective-C method's nil result
    ///   becomes an error in Swift), or the store's failure.
    public func string(forKey key: String, error: Void) throws -> String {
        let data = try data(forKey: key, error: ())
        guard let string = String(data: data, encoding: .utf8) else { throw ErrorMapping.conversion() }
        return string
    }

    /// The value for `key`; nil if absent or on any failure.
    public func data(forKey key: String) -> Data? {
        try? data(forKey: key, error: ())
    }

    /// The value for `key`.
    /// - Throws: as ``string(forKey:error:)-method``.
    public func data(forKey key: String, error: Void) throws -> Data {
        let query = try query(forKey: key, returnData: true)
        do {
            guard let value = try store().copyMatching(query).first?.value else { throw StoreError.itemNotFound }
            return value.data
        } catch {
            throw ErrorMapping.error(error)
        }
    }

    /// Whether an item exists for `key`; never asks for a proof of presence.
    public func contains(_ key: String?) -> Bool {
        guard let key, let query = try? query(forKey: key, returnData: false) else { return false }
        do {
            return try store().contains(query)
        } catch .interactionNotAllowed {
            return true
        } catch {
            return false
        }
    }

    /// The value for `key` as text, or sets it (nil removes it). Failures read as nil and are
    /// otherwise dropped, as the subscript cannot report them.
    public subscript(key: String) -> String? {
        get { string(forKey: key) }
        set { _ = setString(newValue, forKey: key) }
    }

    // MARK: Writing

    /// Stores `value` (UTF-8) for `key`, replacing any value; nil removes the item.
    /// `key` may be nil, as the header's `nullable` key: storing under no key fails (false).
    @discardableResult
    public func setString(_ value: String?, forKey key: String?) -> Bool {
        guard let key else { return false }
        return (try? setString(value, forKey: key, label: nil, comment: nil, error: ())) != nil
    }

    /// Stores `value` under `key` (removes the item when nil).
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public func setString(_ value: String?, forKey key: String, error: Void) throws {
        try setString(value, forKey: key, label: nil, comment: nil, error: ())
    }

    /// Stores `value` with a label and a comment (kept as they are when nil).
    @discardableResult
    public func setString(_ value: String?, forKey key: String?, label: String?, comment: String?) -> Bool {
        guard let key else { return false }
        return (try? setString(value, forKey: key, label: label, comment: comment, error: ())) != nil
    }

    /// Stores `value` under `key` with a label and a comment.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public func setString(_ value: String?, forKey key: String, label: String?, comment: String?, error: Void) throws {
        try setData(value.map { Data($0.utf8) }, forKey: key, label: label, comment: comment, error: ())
    }

    /// Stores `data` for `key`, replacing any value; nil removes the item.
    @discardableResult
    public func setData(_ data: Data?, forKey key: String) -> Bool {
        (try? setData(data, forKey: key, label: nil, comment: nil, error: ())) != nil
    }

    /// Stores `data` under `key` (removes the item when nil).
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public func setData(_ data: Data?, forKey key: String, error: Void) throws {
        try setData(data, forKey: key, label: nil, comment: nil, error: ())
    }

    /// Stores `data` under `key` with a label and a comment; false if it could not.
    @discardableResult
    public func setData(_ data: Data?, forKey key: String, label: String?, comment: String?) -> Bool {
        (try? setData(data, forKey: key, label: label, comment: comment, error: ())) != nil
    }

    /// Stores `data` for `key` with a label and a comment: updates the item if it exists
    /// (also its accessibility, policy and synchronizable flag), adds it otherwise.
    /// - Throws: an argument error for an empty key, or the store's failure.
    public func setData(_ data: Data?, forKey key: String, label: String?, comment: String?, error: Void) throws {
        guard let data else { return try removeItem(forKey: key, error: ()) }
        let query = try query(forKey: key, returnData: false)
        var changes = Attributes(synchronizable: synchronizable, accessibility: accessibility.coreValue, label: label, comment: comment)
        if let policy = authenticationPolicy {
            guard let control = policy.coreValue else { throw ErrorMapping.argument("the authentication policy \(policy.rawValue) has no meaning for a password item") }
            guard !changes.synchronizable! else { throw ErrorMapping.argument("cannot specify both an authentication policy and synchronizable") }
            changes.accessControl = control
        }
        do {
            let store = try store()
            if try store.contains(query) {
                try store.write([.update(query, attributes: changes, value: SecretBytes(data))])
            } else {
                var attributes = query.attributes.merging(changes)
                attributes.synchronizable = changes.synchronizable
                try store.add(Item(query.itemClass!, attributes: attributes, value: SecretBytes(data)))
            }
        } catch {
            throw ErrorMapping.error(error)
        }
    }

    // MARK: Removing

    /// Removes the item for `key`; removing an absent item succeeds.
    @discardableResult
    public func removeItem(forKey key: String) -> Bool {
        (try? removeItem(forKey: key, error: ())) != nil
    }

    /// Removes the item under `key`.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public func removeItem(forKey key: String, error: Void) throws {
        let query = try query(forKey: key, returnData: false)
        do { try store().delete(query) } catch { throw ErrorMapping.error(error) }
    }

    /// Removes every item of this service (in any access group, when the store names none) or server.
    @discardableResult
    public func removeAllItems() -> Bool {
        (try? removeAllItemsWithError()) != nil
    }

    /// Removes every item of this store's service (or server).
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public func removeAllItemsWithError() throws {
        do { try store().delete(baseQuery(returnData: false)) } catch { throw ErrorMapping.error(error) }
    }

    // MARK: Listing

    /// The keys (accounts) of this store's items (`nullable NSArray` in the header: an empty
    /// store gives an empty array, a store that cannot be read nil).
    public var allKeys: [String]? {
        do { return try store().accounts(matching: baseQuery(returnData: false)) } catch .itemNotFound { return [] } catch { return nil }
    }

    /// This store's items with their values, each a `[String: Any]` dictionary (the header's
    /// untyped `nullable NSArray`): `class`, `service` and `accessGroup` (generic) or `server`,
    /// `protocol` and `authenticationType` (internet), `key`, `value` (a string if UTF-8, else
    /// `Data`), `accessibility` and `synchronizable`.
    public var allItems: [Any]? {
        items(returnData: true)?.map(ItemDictionary.make)
    }

    private func items(returnData: Bool) -> [Item]? {
        do { return try store().copyMatching(baseQuery(returnData: returnData)) } catch .itemNotFound { return [] } catch { return nil }
    }

    /// As UICKeyChainStore prints itself: `()` with no items, else `(`, then each item's
    /// dictionary as `NSDictionary` describes it, then `)`. Values are shown as
    /// `<redacted>`: a description ends up in logs, and secrets must not.
    public override var description: String {
        ItemDictionary.describe((items(returnData: false) ?? []).map(ItemDictionary.make))
    }

    public override var debugDescription: String { description }

    // MARK: Deprecated

    /// Does nothing (writes are durable when they return); kept from UICKeyChainStore 1.x.
    @available(*, deprecated, message: "writes are durable when they return")
    @discardableResult
    public func synchronize() -> Bool { true }

    /// Nothing to do: every write is already durable.
    @available(*, deprecated, message: "writes are durable when they return")
    public func synchronizeWithError() throws {}

    // MARK: Internal

    func store() throws(StoreError) -> any Store {
        if let chosenStore { return chosenStore }
        return try DefaultStore.current()
    }

    /// What every query of this store names: the service and access group, or the server.
    var baseAttributes: Attributes {
        switch itemClass {
        case .genericPassword:
            return Attributes(service: service, accessGroup: accessGroup)
        case .internetPassword:
            return Attributes(
                server: server?.host ?? "", protocol: protocolType.coreValue, authenticationType: authenticationType.coreValue,
                port: server?.port)
        }
    }

    var coreItemClass: ItemClass { itemClass == .genericPassword ? .genericPassword : .internetPassword }

    func baseQuery(returnData: Bool) -> Query {
        Query(coreItemClass, attributes: baseAttributes, returnData: returnData, authentication: authenticationContext())
    }

    func query(forKey key: String, returnData: Bool) throws -> Query {
        guard !key.isEmpty else { throw ErrorMapping.argument("the key must not to be nil") }
        var attributes = baseAttributes
        attributes.account = key
        return Query(
            coreItemClass, attributes: attributes, limit: .one, returnData: returnData, returnAttributes: false,
            authentication: authenticationContext())
    }

    private func authenticationContext() -> AuthenticationContext {
        lock.withLock { AuthenticationContext(reason: _authenticationPrompt ?? "", interactionNotAllowed: !_useAuthenticationUI) }
    }
}
