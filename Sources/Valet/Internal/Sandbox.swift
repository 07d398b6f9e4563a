import Foundation
import KeychainCore
import ValetNaming

/// What every Valet flavour does, once: a service (the sandbox), the store it was created
/// with, and the translation of each operation into a store query. The public classes are
/// thin faces over it.
struct Sandbox: Sendable {
    let address: ValetAddress
    let chosenStore: (any Store)?

    static let canaryKey = ValetAddress.canaryKey
    static let canaryValue = ValetAddress.canaryValue

    init(_ address: ValetAddress, store: (any Store)?) {
        self.address = address
        self.chosenStore = store
    }

    var service: Service { address.service }
    var identifier: Identifier { address.identifier }
    var baseAttributes: Attributes { address.baseAttributes }
    var configuration: Configuration { address.configuration }

    func keychain() throws(StoreError) -> any Store {
        if let chosenStore { return chosenStore }
        return try ValetStore.current()
    }

    func attributes(forKey key: String) -> Attributes { address.attributes(forKey: key) }

    func item(forKey key: String, value: SecretBytes) -> Item { address.item(forKey: key, value: value) }

    // MARK: Operations

    /// Writes (once) and reads back the canary, which listings never show.
    func canAccessKeychain() -> Bool {
        if (try? string(forKey: Self.canaryKey)) == Self.canaryValue { return true }
        try? keychain().upsert(item(forKey: Self.canaryKey, value: SecretBytes(utf8: Self.canaryValue)))
        return (try? string(forKey: Self.canaryKey)) == Self.canaryValue
    }

    /// The Secure Enclave flavours' check: a plain whenPasscodeSetThisDeviceOnly Valet of the
    /// same sandbox can use the keychain, and the store can honour access control. Never asks.
    func canAccessWithPasscode() -> Bool {
        let plain = Sandbox(ValetAddress(service.with(.valet(.whenPasscodeSetThisDeviceOnly)), identifier: identifier), store: chosenStore)
        guard plain.canAccessKeychain(), let store = try? keychain() else { return false }
        return store.supportsAccessControl
    }

    func setObject(_ object: Data, forKey key: String) throws(KeychainError) {
        try set(SecretBytes(object), forKey: key)
    }

    /// Straight from the string's UTF-8 into wiped memory: no intermediate `Data` is left behind.
    func setString(_ string: String, forKey key: String) throws(KeychainError) {
        try set(SecretBytes(utf8: string), forKey: key)
    }

    private func set(_ value: SecretBytes, forKey key: String) throws(KeychainError) {
        guard !key.isEmpty else { throw .emptyKey }
        guard value.count > 0 else { throw .emptyValue }
        try perform { () throws(StoreError) in try keychain().upsert(item(forKey: key, value: value)) }
    }

    func object(forKey key: String, authentication: AuthenticationContext? = nil) throws(KeychainError) -> Data {
        try secret(forKey: key, authentication: authentication).data
    }

    /// As Valet: bytes that are not UTF-8 read as `itemNotFound`. Decoded straight from the
    /// wiped buffer, so the caller's String is the only copy left.
    func string(forKey key: String, authentication: AuthenticationContext? = nil) throws(KeychainError) -> String {
        let value = try secret(forKey: key, authentication: authentication)
        guard let string = value.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else { throw .itemNotFound }
        return string
    }

    private func secret(forKey key: String, authentication: AuthenticationContext?) throws(KeychainError) -> SecretBytes {
        guard !key.isEmpty else { throw .emptyKey }
        return try perform { () throws(StoreError) -> SecretBytes in
            let query = Query(
                .genericPassword, attributes: attributes(forKey: key), limit: .one, returnData: true,
                returnAttributes: false, authentication: authentication)
            guard let value = try keychain().copyMatching(query).first?.value, value.count > 0 else { throw .itemNotFound }
            return value
        }
    }

    /// Never decrypts a value, so never asks for a proof of presence. An empty key is
    /// `couldNotAccessKeychain`, as Valet does.
    func containsObject(forKey key: String) throws(KeychainError) -> Bool {
        guard !key.isEmpty else { throw .couldNotAccessKeychain }
        return try perform { () throws(StoreError) -> Bool in
            try keychain().contains(Query(.genericPassword, attributes: attributes(forKey: key), limit: .one))
        }
    }

    /// Every key but the canary; values are not decrypted.
    func allKeys() throws(KeychainError) -> Set<String> {
        do {
            // Each account taken as its item is read (no list of the items is built to be
            // thrown away), then hashed once into a set of the right size (a growing set
            // rehashes what it holds each time it doubles).
            var keys = try keychain().accounts(matching: Query(.genericPassword, attributes: baseAttributes))
            keys.removeAll { $0 == Self.canaryKey }
            return Set(keys)
        } catch .itemNotFound {
            return []
        } catch {
            throw KeychainError(error)
        }
    }

    func removeObject(forKey key: String) throws(KeychainError) {
        guard !key.isEmpty else { throw .emptyKey }
        try perform { () throws(StoreError) in try keychain().delete(Query(.genericPassword, attributes: attributes(forKey: key))) }
    }

    func removeAllObjects() throws(KeychainError) {
        try perform { () throws(StoreError) in try keychain().delete(Query(.genericPassword, attributes: baseAttributes)) }
    }

    @discardableResult
    func perform<R>(_ body: () throws(StoreError) -> R) throws(KeychainError) -> R {
        do { return try body() } catch { throw KeychainError(error) }
    }
}
