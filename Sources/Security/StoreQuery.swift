import Foundation
import KeychainCore

/// For the package's faces that take Apple query dictionaries (Valet's migration): the store
/// query a search dictionary means, read exactly as ``SecItemCopyMatching(_:_:)`` reads it.
package enum SecItemStoreQuery {
    /// The store query for `dictionary`; nil when SecItemCopyMatching would refuse it
    /// (`errSecParam`, `errSecUnimplemented`).
    package static func search(_ dictionary: CFDictionary) -> Query? {
        try? ItemRequest(dictionary, purpose: .search).searchQuery
    }
}

extension ItemRequest {
    /// The store query a search asks for. Persistent references are made from attributes,
    /// so asking for one asks for them.
    var searchQuery: Query {
        Query(
            itemClass, attributes: attributes, limit: limit, returnData: returnData,
            returnAttributes: returnAttributes || returnPersistentReference, authentication: readContext)
    }
}
