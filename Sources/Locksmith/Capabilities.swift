import Foundation
import KeychainCore

/// A value that can be written to the keychain: its ``data`` payload, archived.
public protocol CreateableSecureStorable: SecureStorable {
    /// The payload, stored as a keyed archive (String, numbers, Bool, Date, Data, URL and
    /// arrays or dictionaries of them).
    var data: [String: Any] { get }
    /// Performs create and update requests; by default against the store (override to inspect them).
    var performCreateRequestClosure: PerformRequestClosureType { get }
    /// Adds the item. - Throws: ``LocksmithError/duplicate`` if it exists, ``LocksmithError/param``
    /// for a payload that cannot be archived, and a ``LocksmithError`` for every other failure.
    func createInSecureStore() throws
    /// Replaces the item's payload and attributes (accessibility included), or adds it.
    /// - Throws: as ``createInSecureStore()``, but never `.duplicate`.
    func updateInSecureStore() throws
}

public extension CreateableSecureStorable {
    var performCreateRequestClosure: PerformRequestClosureType { LocksmithRequest.perform }

    func createInSecureStore() throws {
        try perform(.create, performCreateRequestClosure, payload: PayloadArchive.encode(data))
    }

    func updateInSecureStore() throws {
        try perform(.update, performCreateRequestClosure, payload: PayloadArchive.encode(data))
    }

    /// The create request as the keychain's attribute dictionary.
    var asCreateableSecureStoragePropertyDictionary: [String: Any] {
        ((try? keychainItem(payload: PayloadArchive.encode(data))).map { LocksmithRequest(operation: .create, item: $0).dictionary }) ?? [:]
    }
}

/// A value whose item can be read back, with typed metadata.
public protocol ReadableSecureStorable: SecureStorable {
    /// What runs a read request; Locksmith lets tests replace it.
    var performReadRequestClosure: PerformRequestClosureType { get }
    /// The stored item, or nil if there is none (or it cannot be read). Through generic code
    /// too, this is the real result: a ``GenericPasswordSecureStorableResultType`` or an
    /// ``InternetPasswordSecureStorableResultType`` (Locksmith returned nil there).
    func readFromSecureStore() -> SecureStorableResultType?
}

public extension ReadableSecureStorable {
    /// The store's read.
    var performReadRequestClosure: PerformRequestClosureType { LocksmithRequest.perform }

    func readFromSecureStore() -> SecureStorableResultType? {
        guard let item = try? keychainItem() else { return nil }
        var result: AnyObject?
        guard performReadRequestClosure(LocksmithRequest(operation: .read, item: item), &result) == errSecSuccess,
            let dictionary = Self.dictionary(from: result)
        else { return nil }
        return item.itemClass == .genericPassword ? GenericPasswordResult(resultDictionary: dictionary) : InternetPasswordResult(resultDictionary: dictionary)
    }

    /// The read request as the keychain's attribute dictionary.
    var asReadableSecureStoragePropertyDictionary: [String: Any] {
        ((try? keychainItem()).map { LocksmithRequest(operation: .read, item: $0).dictionary }) ?? [:]
    }

    private static func dictionary(from result: AnyObject?) -> [String: Any]? {
        if let dictionary = result as? [String: Any] { return dictionary }
        guard let dictionary = result as? NSDictionary else { return nil }
        var out: [String: Any] = [:]
        for (key, value) in dictionary { if let key = key as? String { out[key] = value } }
        return out
    }
}

public extension ReadableSecureStorable where Self: GenericPasswordSecureStorable {
    /// The stored generic password with its typed metadata, or nil.
    func readFromSecureStore() -> GenericPasswordSecureStorableResultType? {
        (readFromSecureStore() as SecureStorableResultType?) as? GenericPasswordSecureStorableResultType
    }
}

public extension ReadableSecureStorable where Self: InternetPasswordSecureStorable {
    /// The stored internet password with its typed metadata, or nil.
    func readFromSecureStore() -> InternetPasswordSecureStorableResultType? {
        (readFromSecureStore() as SecureStorableResultType?) as? InternetPasswordSecureStorableResultType
    }
}

/// A value whose item can be deleted.
public protocol DeleteableSecureStorable: SecureStorable {
    /// What runs a delete request; Locksmith lets tests replace it.
    var performDeleteRequestClosure: PerformRequestClosureType { get }
    /// Deletes the item. - Throws: ``LocksmithError/notFound`` if there is none, and a
    /// ``LocksmithError`` for every other failure.
    func deleteFromSecureStore() throws
}

public extension DeleteableSecureStorable {
    /// The store's delete.
    var performDeleteRequestClosure: PerformRequestClosureType { LocksmithRequest.perform }

    func deleteFromSecureStore() throws {
        try perform(.delete, performDeleteRequestClosure, payload: nil)
    }

    /// The delete request as the keychain's attribute dictionary.
    var asDeleteableSecureStoragePropertyDictionary: [String: Any] {
        ((try? keychainItem()).map { LocksmithRequest(operation: .delete, item: $0).dictionary }) ?? [:]
    }
}

extension SecureStorable {
    /// The one path of every write: build the request, run the closure, throw any failure.
    func perform(_ operation: LocksmithRequest.Operation, _ closure: PerformRequestClosureType, payload: Data?) throws(LocksmithError) {
        let request = LocksmithRequest(operation: operation, item: try keychainItem(payload: payload))
        var result: AnyObject?
        let status = closure(request, &result)
        guard status == errSecSuccess else { throw LocksmithError.failure(status) }
    }
}
