import Foundation
import KeychainCore

// The four SecItem functions, with Apple's signatures, over the store the other faces use
// (KEYCHAIN_BACKEND, the vault by default; DefaultStore).

/// Adds the item `attributes` describe (class, attributes, `kSecValueData`); with a return
/// key, `result` receives it as SecItemCopyMatching would.
///
/// Returns `errSecSuccess`, `errSecDuplicateItem`, `errSecParam` for a malformed dictionary,
/// `errSecInteractionNotAllowed` when the vault is locked, or another `errSec...` code.
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCall.run { () throws(SecItemCall.Failure) in
        let request = try SecItemCall.read(attributes, .add)
        let store = try SecItemCall.store()
        var itemAttributes = request.attributes
        itemAttributes.accessibility = itemAttributes.accessibility ?? .whenUnlocked
        let item = Item(request.itemClass!, attributes: itemAttributes, value: SecretBytes([UInt8](request.value ?? Data())))
        try SecItemCall.perform { () throws(StoreError) in try store.add(item) }
        if let result, request.returnData || request.returnAttributes || request.returnPersistentReference {
            var query = Query(identifying: item)
            query.limit = .one
            query.returnData = request.returnData
            let found = try SecItemCall.perform { () throws(StoreError) in try store.copyMatching(query) }
            result.pointee = ItemResult.shape(found, request: request)
        }
    }
}

/// Finds the items `query` matches (attributes it does not name match anything; one item
/// unless `kSecMatchLimit` says otherwise) and returns what its `kSecReturn...` keys ask for.
///
/// Returns `errSecSuccess`, `errSecItemNotFound`, `errSecParam` (a malformed query, or data
/// asked of every match), `errSecInteractionNotAllowed`, `errSecUserCanceled`, `errSecAuthFailed`.
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCall.run { () throws(SecItemCall.Failure) in
        let request = try SecItemCall.read(query, .search)
        let store = try SecItemCall.store()
        var found = try SecItemCall.perform { () throws(StoreError) in try store.copyMatching(request.searchQuery) }
        if let count = request.limitCount { found = Array(found.prefix(count)) }
        result?.pointee = ItemResult.shape(found, request: request)
    }
}

/// Changes every item `query` matches: the attributes (and `kSecValueData`) in `attributesToUpdate`.
///
/// Returns `errSecSuccess`, `errSecItemNotFound`, `errSecDuplicateItem` (an item renamed onto
/// another), `errSecParam`.
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemCall.run { () throws(SecItemCall.Failure) in
        let request = try SecItemCall.read(query, .search)
        let changes = try SecItemCall.read(attributesToUpdate, .changes)
        let store = try SecItemCall.store()
        let value = changes.value.map { SecretBytes([UInt8]($0)) }
        _ = try SecItemCall.perform { () throws(StoreError) in
            try store.update(Query(request.itemClass, attributes: request.attributes), attributes: changes.attributes, value: value)
        }
    }
}

/// Deletes every item `query` matches.
///
/// Returns `errSecSuccess`, `errSecItemNotFound` when nothing matched, `errSecParam`.
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecItemCall.run { () throws(SecItemCall.Failure) in
        let request = try SecItemCall.read(query, .search)
        let store = try SecItemCall.store()
        let deleted = try SecItemCall.perform { () throws(StoreError) in try store.delete(Query(request.itemClass, attributes: request.attributes)) }
        if deleted == 0 { throw SecItemCall.Failure(errSecItemNotFound) }
    }
}

/// One SecItem call: its dictionary read, its store, and its failures as OSStatus codes.
enum SecItemCall {
    struct Failure: Error {
        let status: OSStatus
        init(_ status: OSStatus) { self.status = status }
    }

    static func run(_ body: () throws(Failure) -> Void) -> OSStatus {
        do {
            try body()
            return errSecSuccess
        } catch {
            return error.status
        }
    }

    static func read(_ dictionary: CFDictionary, _ purpose: ItemRequest.Purpose) throws(Failure) -> ItemRequest {
        do {
            return try ItemRequest(dictionary, purpose: purpose)
        } catch {
            throw Failure(error.status)
        }
    }

    static func store() throws(Failure) -> any Store {
        do {
            return try DefaultStore.current()
        } catch {
            throw Failure(status(error))
        }
    }

    static func perform<R>(_ body: () throws(StoreError) -> R) throws(Failure) -> R {
        do {
            return try body()
        } catch {
            throw Failure(status(error))
        }
    }

    /// The OSStatus Apple's keychain gives for each failure; the reason itself is kept in
    /// `FailureLog.last` (and logged with `KEYCHAIN_LOG=1`).
    static func status(_ error: StoreError) -> OSStatus {
        FailureLog.record(error)
        return OSStatus(error.keychainStatus)
    }
}
