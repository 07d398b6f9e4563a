import Foundation
import KeychainCore

/// One keychain request made by a conforming type, handed to its `perform…RequestClosure`:
/// on Linux this stands where Locksmith passes a `CFDictionary`.
public struct LocksmithRequest: @unchecked Sendable {
    /// What the request does.
    public enum Operation: Sendable {
        /// Stores a new item (`SecItemAdd`).
        case create
        /// Changes a stored item (`SecItemUpdate`).
        case update
        /// Reads an item (`SecItemCopyMatching`).
        case read
        /// Deletes an item (`SecItemDelete`).
        case delete
    }

    /// What this request does.
    public let operation: Operation
    /// The item class and attributes (with the archived payload for create and update).
    public let item: Item

    /// The request as the keychain's attribute dictionary (`class`, `acct`, `svce`, `pdmn`,
    /// `v_Data`...), as Locksmith's closures receive it.
    public var dictionary: [String: Any] {
        KeychainDictionary.make(item.itemClass, item.attributes, valueData: item.value?.data)
    }

    /// Runs the request against the default store (`KeychainCore.DefaultStore`). A read
    /// puts the found item's attribute dictionary (with `v_Data`) in `result`.
    public static func perform(_ request: LocksmithRequest, _ result: inout AnyObject?) -> OSStatus {
        do {
            let store = try DefaultStore.current()
            switch request.operation {
            case .create:
                try store.add(request.item)
            case .update:
                try store.upsert(request.item)
            case .read:
                // What the type does not declare is not matched, as in Apple's keychain.
                var query = Query(naming: request.item)
                query.limit = .one
                query.returnData = true
                guard let found = try store.copyMatching(query).first else { return StoreError.itemNotFound.keychainStatus }
                result = NSDictionary(dictionary: KeychainDictionary.make(found.itemClass, found.attributes, valueData: found.value?.data))
            case .delete:
                guard try store.delete(Query(naming: request.item)) > 0 else { return StoreError.itemNotFound.keychainStatus }
            }
            return errSecSuccess
        } catch {
            // A status has no room for the reason: FailureLog keeps it (and logs it with KEYCHAIN_LOG=1).
            FailureLog.record(error)
            return error.keychainStatus
        }
    }
}

/// A request closure: performs the request, may set `result`, returns the keychain status.
public typealias PerformRequestClosureType = (_ requestReference: LocksmithRequest, _ result: inout AnyObject?) -> OSStatus
