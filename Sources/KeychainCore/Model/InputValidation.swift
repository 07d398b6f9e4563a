#if canImport(Glibc)
    import Glibc
#endif

/// The checks every store makes on what it is given, before it touches anything, so that the
/// vault and the Secret Service refuse the same inputs with the same error.
extension Attributes {
    /// Refuses a NUL character in any text attribute: C strings (libsecret, D-Bus) end there,
    /// so `"admin\0x"` would silently become `"admin"` and name another item.
    /// - Throws: ``StoreError/invalidArgument(_:)`` naming the attribute (never its value).
    package func validate() throws(StoreError) {
        // Field by field, without building a collection: this runs on every read.
        func check(_ value: String?, _ name: String) throws(StoreError) {
            if let value, Self.containsNUL(value) { throw .invalidArgument("the \(name) contains a NUL character") }
        }
        try check(service, "service")
        try check(account, "account")
        try check(accessGroup, "access group")
        try check(server, "server")
        try check(path, "path")
        try check(securityDomain, "security domain")
        try check(label, "label")
        try check(comment, "comment")
        try check(description, "description")
        try check(`protocol`?.rawValue, "protocol")
        try check(authenticationType?.rawValue, "authentication type")
    }
}

extension Attributes {
    /// memchr over a native string's contiguous bytes (byte by byte through the UTF-8 view
    /// cost a twentieth of a read).
    fileprivate static func containsNUL(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 0, bytes.count) != nil
        } ?? text.utf8.contains(0)
    }
}

extension Query {
    /// ``Attributes/validate()`` for the attributes the query names.
    package func validate() throws(StoreError) { try attributes.validate() }
}

extension WriteOperation {
    /// ``Attributes/validate()`` for every attribute set the operation carries.
    package func validate() throws(StoreError) {
        switch self {
        case .add(let item), .upsert(let item): try item.attributes.validate()
        case .update(let query, let attributes, _): try query.validate(); try attributes.validate()
        case .delete(let query): try query.validate()
        }
    }
}
