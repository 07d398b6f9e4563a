import Foundation
import KeychainCore
import KeychainTestSupport
import Security
import Testing

/// The four SecItem functions as Apple's keychain (the data-protection keychain) answers
/// them, on every store: matching, limits, result shapes, every error.
@Suite("SecItem on every store")
struct SecItemTests {
    static let stores = StoreUnderTest.allCases.filter { $0 == .vault || SecretServiceEnvironment.isAvailable }

    func with(_ kind: StoreUnderTest, _ body: () throws -> Void) throws {
        let store = try TestStore(kind)
        try DefaultStore.withStore(store.store, body)
    }

    func add(_ service: String, _ account: String, _ value: String, extra: [String: Any] = [:]) -> OSStatus {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        query[kSecValueData as String] = Data(value.utf8)
        query.merge(extra) { $1 }
        return SecItemAdd(query as CFDictionary, nil)
    }

    func copy(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result)
    }

    @Test("add, then read the data back; a second add is errSecDuplicateItem; an unknown item is errSecItemNotFound", arguments: stores)
    func addAndRead(_ kind: StoreUnderTest) throws {
        try with(kind) {
            #expect(add("svc", "acct", "s3cret") == errSecSuccess)
            #expect(add("svc", "acct", "again") == errSecDuplicateItem)
            let (status, result) = copy([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc", kSecAttrAccount as String: "acct", kSecReturnData as String: true,
            ])
            #expect(status == errSecSuccess)
            #expect((result as? Data).map { String(decoding: $0, as: UTF8.self) } == "s3cret")
            #expect(copy([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "nobody", kSecReturnData as String: true]).0 == errSecItemNotFound)
        }
    }

    @Test("attributes a query does not name match anything; access group absent means every group; the limit defaults to one", arguments: stores)
    func wildcards(_ kind: StoreUnderTest) throws {
        try with(kind) {
            #expect(add("svc", "a", "1", extra: [kSecAttrAccessGroup as String: "group.Druidia"]) == errSecSuccess)
            #expect(add("svc", "b", "2") == errSecSuccess)
            let (status, one) = copy([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc", kSecReturnAttributes as String: true])
            #expect(status == errSecSuccess && one is NSDictionary)
            let (_, all) = copy([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc", kSecReturnAttributes as String: kCFBooleanTrue!,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            let accounts = (all as? [[String: Any]])?.compactMap { $0[kSecAttrAccount as String] as? String }
            #expect(Set(accounts ?? []) == ["a", "b"])
            let grouped = copy([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: "group.Druidia", kSecReturnAttributes as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            #expect((grouped.1 as? [[String: Any]])?.count == 1)
        }
    }

    @Test("result shapes: data, attributes, both (data under v_Data), arrays for match-all, nothing when nothing is asked; data with match-all is errSecParam", arguments: stores)
    func resultShapes(_ kind: StoreUnderTest) throws {
        try with(kind) {
            #expect(add("svc", "acct", "value", extra: [kSecAttrLabel as String: "a label"]) == errSecSuccess)
            let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc"]
            let both = copy(base.merging([kSecReturnData as String: true, kSecReturnAttributes as String: true]) { $1 })
            let dictionary = both.1 as? [String: Any]
            #expect(dictionary?[kSecAttrAccount as String] as? String == "acct")
            #expect(dictionary?[kSecAttrLabel as String] as? String == "a label")
            #expect(dictionary?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)
            #expect((dictionary?[kSecValueData as String] as? Data) == Data("value".utf8))
            #expect((both.1 as? NSDictionary)?.count == dictionary?.count)
            let nothing = copy(base)
            #expect(nothing.0 == errSecSuccess && nothing.1 == nil)
            let dataOfAll = copy(base.merging([kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) { $1 })
            #expect(dataOfAll.0 == errSecParam)
            let attributesOfAll = copy(base.merging([kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) { $1 })
            #expect((attributesOfAll.1 as? [[String: Any]])?.count == 1)
            // With their attributes, as iOS's keychain gives them (KeychainAccess's allItems relies on it).
            let everything = copy(base.merging([kSecReturnData as String: true, kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) { $1 })
            #expect(((everything.1 as? [[String: Any]])?.first?[kSecValueData as String] as? Data) == Data("value".utf8))
            // A persistent reference names the item again, alone or beside the rest.
            let reference = copy(base.merging([kSecReturnPersistentRef as String: true]) { $1 }).1 as? Data
            let again = copy([kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference ?? Data(), kSecReturnData as String: true])
            #expect(again.0 == errSecSuccess && (again.1 as? Data) == Data("value".utf8))
            #expect(copy([kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: Data("junk".utf8)]).0 == errSecParam)
            // A reference asked for beside the rest adds nothing (passwords have none); alone, it is not supported.
            let withReference = copy(base.merging([kSecReturnAttributes as String: true, kSecReturnRef as String: true]) { $1 })
            #expect(withReference.0 == errSecSuccess && withReference.1 is NSDictionary)
            #expect(copy(base.merging([kSecReturnRef as String: true]) { $1 }).0 == errSecUnimplemented)
            // Looked up as [AnyHashable: Any] with a String key, as on Apple platforms.
            let hashable = (both.1 as? [AnyHashable: Any])?[kSecAttrAccount as String] as? String
            #expect(hashable == "acct")
            #expect((both.1 as? [AnyHashable: Any])?[AnyHashable(kSecAttrAccount)] as? String == "acct")
        }
    }

    @Test("synchronizable items are found only by queries that say so, or kSecAttrSynchronizableAny", arguments: stores)
    func synchronizable(_ kind: StoreUnderTest) throws {
        try with(kind) {
            #expect(add("svc", "cloud", "v", extra: [kSecAttrSynchronizable as String: kCFBooleanTrue!]) == errSecSuccess)
            let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "cloud", kSecReturnData as String: true]
            #expect(copy(base).0 == errSecItemNotFound)
            #expect(copy(base.merging([kSecAttrSynchronizable as String: true]) { $1 }).0 == errSecSuccess)
            #expect(copy(base.merging([kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]) { $1 }).0 == errSecSuccess)
        }
    }

    @Test("update changes every match (value and attributes); delete removes every match; both say errSecItemNotFound when nothing matches", arguments: stores)
    func updateAndDelete(_ kind: StoreUnderTest) throws {
        try with(kind) {
            #expect(add("svc", "a", "1") == errSecSuccess)
            #expect(add("svc", "b", "2") == errSecSuccess)
            let service: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc"]
            let changes: [String: Any] = [kSecValueData as String: Data("new".utf8), kSecAttrComment as String: "changed"]
            #expect(SecItemUpdate(service as CFDictionary, changes as CFDictionary) == errSecSuccess)
            let read = copy(service.merging([kSecAttrAccount as String: "b", kSecReturnData as String: true]) { $1 })
            #expect((read.1 as? Data) == Data("new".utf8))
            let missing: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "other"]
            #expect(SecItemUpdate(missing as CFDictionary, changes as CFDictionary) == errSecItemNotFound)
            #expect(SecItemUpdate(service as CFDictionary, [kSecClass as String: kSecClassInternetPassword] as CFDictionary) == errSecParam)
            #expect(SecItemDelete(service as CFDictionary) == errSecSuccess)
            #expect(copy(service.merging([kSecReturnData as String: true]) { $1 }).0 == errSecItemNotFound)
            #expect(SecItemDelete(service as CFDictionary) == errSecItemNotFound)
        }
    }

    @Test("an account given as bytes comes back as bytes, one given as text as text; its UTF-8 bytes and its text name the same item", arguments: stores)
    func accountKeepsItsForm(_ kind: StoreUnderTest) throws {
        try with(kind) {
            let asBytes: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc", kSecAttrAccount as String: Data("bytes".utf8)]
            #expect(SecItemAdd(asBytes.merging([kSecValueData as String: Data("1".utf8)]) { $1 } as CFDictionary, nil) == errSecSuccess)
            #expect(add("svc", "text", "2") == errSecSuccess)
            let all = copy([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc", kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            let accounts = (all.1 as? [[String: Any]] ?? []).map { $0[kSecAttrAccount as String] }
            #expect(accounts.compactMap { $0 as? Data } == [Data("bytes".utf8)])
            #expect(accounts.compactMap { $0 as? String } == ["text"])
            let byText: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "bytes", kSecReturnData as String: true]
            #expect((copy(byText).1 as? Data) == Data("1".utf8))
            // Renamed through an update given text, the account is text from then on.
            #expect(SecItemUpdate(asBytes as CFDictionary, [kSecAttrAccount as String: "renamed"] as CFDictionary) == errSecSuccess)
            let renamed = copy([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "renamed", kSecReturnAttributes as String: true])
            #expect((renamed.1 as? [String: Any])?[kSecAttrAccount as String] as? String == "renamed")
        }
    }

    @Test("internet passwords: server, protocol, port, path and authentication type name them", arguments: stores)
    func internetPasswords(_ kind: StoreUnderTest) throws {
        try with(kind) {
            let item: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com", kSecAttrAccount as String: "me",
                kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443, kSecAttrPath as String: "/login",
                kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm, kSecValueData as String: Data("pw".utf8),
            ]
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            let (status, result) = copy([
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com", kSecReturnAttributes as String: true,
                kSecReturnData as String: true,
            ])
            let found = result as? [String: Any]
            #expect(status == errSecSuccess && found?[kSecAttrPort as String] as? Int == 443)
            #expect(found?[kSecAttrProtocol as String] as? String == "htps" && found?[kSecAttrPath as String] as? String == "/login")
        }
    }

    @Test(
        "malformed dictionaries get errSecParam (no class, an unknown class, a value of the wrong type, bytes that are not text, an unknown key, a read-only date), other classes errSecUnimplemented"
    )
    func malformed() throws {
        try with(.vault) {
            #expect(SecItemAdd([kSecAttrAccount as String: "a"] as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd([kSecClass as String: "nope"] as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd([kSecClass as String: kSecClassCertificate] as CFDictionary, nil) == errSecUnimplemented)
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: 42] as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: Data([0xFF, 0xFE])] as CFDictionary, nil) == errSecParam)
            // An account given as UTF-8 bytes (as SwiftKeychainWrapper gives it) names the same item as the text.
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: Data("bytes".utf8)] as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "bytes"] as CFDictionary, nil) == errSecDuplicateItem)
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecValueData as String: "text, not data"] as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, "zzzz": "x"] as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrCreationDate as String: Date()] as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrPort as String: "443"] as CFDictionary, nil) == errSecParam)
            var result: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: "m_LimitSome"] as CFDictionary, &result) == errSecParam)
            #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecValueData as String: Data()] as CFDictionary) == errSecParam)
        }
    }

    @Test("an item added through SecItem is the store's item: found by a KeychainCore query, and the reverse")
    func sameItems() throws {
        let test = try TestStore(.vault)
        try DefaultStore.withStore(test.store) {
            #expect(add("api.example.com", "deploy", "token") == errSecSuccess)
            let found = try test.store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "api.example.com", account: "deploy"), returnData: true))
            #expect(found.first?.value == SecretBytes(utf8: "token"))
            try test.store.add(Item(.genericPassword, attributes: Attributes(service: "from-core", account: "k"), value: SecretBytes(utf8: "v")))
            let (status, result) = copy([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "from-core", kSecReturnData as String: true])
            #expect(status == errSecSuccess && (result as? Data) == Data("v".utf8))
        }
    }

    @Test("SecCopyErrorMessageString describes the codes; an access control maps to the vault's presence sealing or is refused")
    func messagesAndAccessControl() throws {
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil).map { String($0) }?.contains("could not be found") == true)
        var error: Unmanaged<CFError>?
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, &error) != nil)
        #expect(SecAccessControlCreateWithFlags(nil, "not a protection" as CFString, .userPresence, &error) == nil)
        #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == Int(errSecParam))
    }
}
