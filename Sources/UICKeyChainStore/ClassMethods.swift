import Foundation
import KeychainCore

// UICKeyChainStore's class-level conveniences: a store for the (default or given) service,
// made for the call. Unlike UICKeyChainStore, the throwing setters report their errors.
extension UICKeyChainStore {
    /// The string under `key`, on a store for the default service, as the instance method does; nil when missing or unreadable.
    public class func string(forKey key: String) -> String? { Self(service: nil).string(forKey: key) }
    /// The string under `key`, on a store for the default service, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func string(forKey key: String, error: Void) throws -> String { try Self(service: nil).string(forKey: key, error: ()) }
    /// The string under `key`, on a store for `service`, as the instance method does; nil when missing or unreadable.
    public class func string(forKey key: String, service: String?) -> String? { Self(service: service).string(forKey: key) }
    /// The string under `key`, on a store for `service`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func string(forKey key: String, service: String?, error: Void) throws -> String { try Self(service: service).string(forKey: key, error: ()) }
    /// The string under `key`, on a store for `service` and `accessGroup`, as the instance method does; nil when missing or unreadable.
    public class func string(forKey key: String, service: String?, accessGroup: String?) -> String? {
        Self(service: service, accessGroup: accessGroup).string(forKey: key)
    }
    /// The string under `key`, on a store for `service` and `accessGroup`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func string(forKey key: String, service: String?, accessGroup: String?, error: Void) throws -> String {
        try Self(service: service, accessGroup: accessGroup).string(forKey: key, error: ())
    }

    /// Stores a string under `key` (removes the item when nil), on a store for the default service, as the instance method does; false if it failed.
    @discardableResult
    public class func setString(_ value: String?, forKey key: String) -> Bool { Self(service: nil).setString(value, forKey: key) }
    /// Stores a string under `key` (removes the item when nil), on a store for the default service, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func setString(_ value: String?, forKey key: String, error: Void) throws { try Self(service: nil).setString(value, forKey: key, error: ()) }
    /// Stores a string under `key` (removes the item when nil), on a store for `service`, as the instance method does; false if it failed.
    @discardableResult
    public class func setString(_ value: String?, forKey key: String, service: String?) -> Bool { Self(service: service).setString(value, forKey: key) }
    /// Stores a string under `key` (removes the item when nil), on a store for `service`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func setString(_ value: String?, forKey key: String, service: String?, error: Void) throws {
        try Self(service: service).setString(value, forKey: key, error: ())
    }
    /// Stores a string under `key` (removes the item when nil), on a store for `service` and `accessGroup`, as the instance method does; false if it failed.
    @discardableResult
    public class func setString(_ value: String?, forKey key: String, service: String?, accessGroup: String?) -> Bool {
        Self(service: service, accessGroup: accessGroup).setString(value, forKey: key)
    }
    /// Stores a string under `key` (removes the item when nil), on a store for `service` and `accessGroup`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func setString(_ value: String?, forKey key: String, service: String?, accessGroup: String?, error: Void) throws {
        try Self(service: service, accessGroup: accessGroup).setString(value, forKey: key, error: ())
    }

    /// The data under `key`, on a store for the default service, as the instance method does; nil when missing or unreadable.
    public class func data(forKey key: String) -> Data? { Self(service: nil).data(forKey: key) }
    /// The data under `key`, on a store for the default service, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func data(forKey key: String, error: Void) throws -> Data { try Self(service: nil).data(forKey: key, error: ()) }
    /// The data under `key`, on a store for `service`, as the instance method does; nil when missing or unreadable.
    public class func data(forKey key: String, service: String?) -> Data? { Self(service: service).data(forKey: key) }
    /// The data under `key`, on a store for `service`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func data(forKey key: String, service: String?, error: Void) throws -> Data { try Self(service: service).data(forKey: key, error: ()) }
    /// The data under `key`, on a store for `service` and `accessGroup`, as the instance method does; nil when missing or unreadable.
    public class func data(forKey key: String, service: String?, accessGroup: String?) -> Data? {
        Self(service: service, accessGroup: accessGroup).data(forKey: key)
    }
    /// The data under `key`, on a store for `service` and `accessGroup`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func data(forKey key: String, service: String?, accessGroup: String?, error: Void) throws -> Data {
        try Self(service: service, accessGroup: accessGroup).data(forKey: key, error: ())
    }

    /// Stores data under `key` (removes the item when nil), on a store for the default service, as the instance method does; false if it failed.
    @discardableResult
    public class func setData(_ data: Data?, forKey key: String) -> Bool { Self(service: nil).setData(data, forKey: key) }
    /// Stores data under `key` (removes the item when nil), on a store for the default service, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func setData(_ data: Data?, forKey key: String, error: Void) throws { try Self(service: nil).setData(data, forKey: key, error: ()) }
    /// Stores data under `key` (removes the item when nil), on a store for `service`, as the instance method does; false if it failed.
    @discardableResult
    public class func setData(_ data: Data?, forKey key: String, service: String?) -> Bool { Self(service: service).setData(data, forKey: key) }
    /// Stores data under `key` (removes the item when nil), on a store for `service`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func setData(_ data: Data?, forKey key: String, service: String?, error: Void) throws {
        try Self(service: service).setData(data, forKey: key, error: ())
    }
    /// Stores data under `key` (removes the item when nil), on a store for `service` and `accessGroup`, as the instance method does; false if it failed.
    @discardableResult
    public class func setData(_ data: Data?, forKey key: String, service: String?, accessGroup: String?) -> Bool {
        Self(service: service, accessGroup: accessGroup).setData(data, forKey: key)
    }
    /// Stores data under `key` (removes the item when nil), on a store for `service` and `accessGroup`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func setData(_ data: Data?, forKey key: String, service: String?, accessGroup: String?, error: Void) throws {
        try Self(service: service, accessGroup: accessGroup).setData(data, forKey: key, error: ())
    }

    /// Removes the item under `key`, on a store for the default service, as the instance method does; false if it failed.
    @discardableResult
    public class func removeItem(forKey key: String) -> Bool { Self(service: nil).removeItem(forKey: key) }
    /// Removes the item under `key`, on a store for the default service, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func removeItem(forKey key: String, error: Void) throws { try Self(service: nil).removeItem(forKey: key, error: ()) }
    /// Removes the item under `key`, on a store for `service`, as the instance method does; false if it failed.
    @discardableResult
    public class func removeItem(forKey key: String, service: String?) -> Bool { Self(service: service).removeItem(forKey: key) }
    /// Removes the item under `key`, on a store for `service`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func removeItem(forKey key: String, service: String?, error: Void) throws { try Self(service: service).removeItem(forKey: key, error: ()) }
    /// Removes the item under `key`, on a store for `service` and `accessGroup`, as the instance method does; false if it failed.
    @discardableResult
    public class func removeItem(forKey key: String, service: String?, accessGroup: String?) -> Bool {
        Self(service: service, accessGroup: accessGroup).removeItem(forKey: key)
    }
    /// Removes the item under `key`, on a store for `service` and `accessGroup`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func removeItem(forKey key: String, service: String?, accessGroup: String?, error: Void) throws {
        try Self(service: service, accessGroup: accessGroup).removeItem(forKey: key, error: ())
    }

    /// Removes every item of the default service.
    @discardableResult
    public class func removeAllItems() -> Bool { Self(service: nil).removeAllItems() }
    /// Removes every item, on a store for the default service, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func removeAllItemsWithError() throws { try Self(service: nil).removeAllItemsWithError() }
    /// Removes every item, on a store for `service`, as the instance method does; false if it failed.
    @discardableResult
    public class func removeAllItems(forService service: String?) -> Bool { Self(service: service).removeAllItems() }
    /// Removes every item, on a store for `service`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func removeAllItems(forService service: String?, error: Void) throws { try Self(service: service).removeAllItemsWithError() }
    /// Removes every item, on a store for `service` and `accessGroup`, as the instance method does; false if it failed.
    @discardableResult
    public class func removeAllItems(forService service: String?, accessGroup: String?) -> Bool {
        Self(service: service, accessGroup: accessGroup).removeAllItems()
    }
    /// Removes every item, on a store for `service` and `accessGroup`, as the instance method does.
    /// - Throws: an `NSError` in ``UICKeyChainStoreErrorDomain``.
    public class func removeAllItems(forService service: String?, accessGroup: String?, error: Void) throws {
        try Self(service: service, accessGroup: accessGroup).removeAllItemsWithError()
    }

    /// Every item of the class in the store, as `["service": ..., "key": ...]` for generic
    /// passwords or `["server": ..., "key": ...]` for internet passwords (UICKeyChainStore
    /// reported an empty server; this reports the item's).
    public class func allKeys(with itemClass: UICKeyChainStoreItemClass) -> [[String: String]]? {
        items(of: itemClass, returnData: false)?.map { item in
            let a = item.attributes
            return itemClass == .genericPassword
                ? ["service": a.service ?? "", "key": a.account ?? ""]
                : ["server": a.server ?? "", "key": a.account ?? ""]
        }
    }

    /// Every item of the class in the store, with its value, as ``allItems`` dictionaries.
    public class func allItems(with itemClass: UICKeyChainStoreItemClass) -> [Any]? {
        items(of: itemClass, returnData: true)?.map(ItemDictionary.make)
    }

    /// The items, empty when there are none, nil when the store cannot be read.
    private class func items(of itemClass: UICKeyChainStoreItemClass, returnData: Bool) -> [Item]? {
        let store = Self(service: nil)
        let query = Query(
            itemClass == .genericPassword ? .genericPassword : .internetPassword, returnData: returnData,
            authentication: AuthenticationContext(interactionNotAllowed: true))
        do { return try store.store().copyMatching(query) } catch .itemNotFound { return [] } catch { return nil }
    }

    /// A strong random password in Safari's format (`xxx-xxx-xxx-xxx`, with a lowercase letter,
    /// an uppercase letter and a digit), drawn from OpenSSL's CSPRNG without modulo bias.
    public class func generatePassword() -> String {
        PasswordGenerator.safari()
    }
}
