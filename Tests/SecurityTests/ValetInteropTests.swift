import Foundation
import KeychainCore
import KeychainTestSupport
import Security
import Testing
import Valet

/// A Valet's items and SecItem's are the same items: a Valet's key is found by
/// SecItemCopyMatching with its service string, and an item SecItemAdd writes is read by the Valet.
/// This file names Apple's constants unqualified while importing Valet, Security and
/// Foundation: Valet takes Security's names, as on Apple platforms, and declares none of its own.
@Suite("Valet and SecItem share their items")
struct ValetInteropTests {
    @Test("a Valet's key is read, changed and written through SecItem with the Valet's service string", arguments: SecItemTests.stores)
    func sameItems(_ kind: StoreUnderTest) throws {
        let test = try TestStore(kind)
        try DefaultStore.withStore(test.store) {
            let valet = ValetStore.withStore(test.store) {
                Valet.valet(withExplicitlySet: Identifier(nonEmpty: "com.example.shared-\(UUID().uuidString)")!, accessibility: .whenUnlocked)
            }
            try valet.setString("from-valet", forKey: "token")
            let service = valet.identifier.description
            var result: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: "token",
                kSecReturnAttributes as String: true, kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let found = result as? [String: Any]
            #expect((found?[kSecValueData as String] as? Data) == Data("from-valet".utf8))
            #expect(found?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)

            let target: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: "token",
            ]
            #expect(SecItemUpdate(target as CFDictionary, [kSecValueData as String: Data("from-secitem".utf8)] as CFDictionary) == errSecSuccess)
            #expect(try valet.string(forKey: "token") == "from-secitem")
            let added: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: "second",
                kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked, kSecValueData as String: Data("added".utf8),
            ]
            #expect(SecItemAdd(added as CFDictionary, nil) == errSecSuccess)
            #expect(try valet.string(forKey: "second") == "added")
            #expect(try valet.allKeys() == ["token", "second"])
        }
    }

    @Test("a Valet migration query written with Security's constants and CoreFoundation booleans moves the items it names", arguments: SecItemTests.stores)
    func migrationTakesSecurityNames(_ kind: StoreUnderTest) throws {
        let test = try TestStore(kind)
        try DefaultStore.withStore(test.store) {
            let legacy = "legacy-\(UUID().uuidString)"
            for (account, synchronizable) in [("local", kCFBooleanFalse!), ("travelling", kCFBooleanTrue!)] {
                let item: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: legacy, kSecAttrAccount as String: account,
                    kSecAttrSynchronizable as String: synchronizable, kSecValueData as String: Data(account.utf8),
                ]
                #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            }
            let valet = ValetStore.withStore(test.store) {
                Valet.valet(with: Identifier(nonEmpty: "com.example.migrated-\(UUID().uuidString)")!, accessibility: .whenUnlocked)
            }
            try valet.migrateObjects(
                matching: [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: legacy, kSecAttrSynchronizable as String: kCFBooleanTrue],
                removeOnCompletion: true)
            #expect(try valet.allKeys() == ["travelling"])
            let left: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: legacy, kSecReturnAttributes as String: true]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(left as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccount as String] as? String == "local")
        }
    }
}
