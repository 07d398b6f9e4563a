import Foundation
import KeychainCore
import KeychainTestSupport
import Security
import Testing
import Valet

/// A Valet's items and SecItem's are the same items: a Valet's key is found by
/// SecItemCopyMatching with its service string, and an item SecItemAdd writes is read by the Valet.
/// (Valet declares the kSec names it needs for its migration queries as well: a file importing
/// both modules qualifies them, `Security.kSecClass`.)
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
                Security.kSecClass as String: Security.kSecClassGenericPassword, Security.kSecAttrService as String: service, Security.kSecAttrAccount as String: "token",
                Security.kSecReturnAttributes as String: true, Security.kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let found = result as? [String: Any]
            #expect((found?[Security.kSecValueData as String] as? Data) == Data("from-valet".utf8))
            #expect(found?[Security.kSecAttrAccessible as String] as? String == Security.kSecAttrAccessibleWhenUnlocked as String)

            let target: [String: Any] = [
                Security.kSecClass as String: Security.kSecClassGenericPassword, Security.kSecAttrService as String: service, Security.kSecAttrAccount as String: "token",
            ]
            #expect(SecItemUpdate(target as CFDictionary, [Security.kSecValueData as String: Data("from-secitem".utf8)] as CFDictionary) == errSecSuccess)
            #expect(try valet.string(forKey: "token") == "from-secitem")
            let added: [String: Any] = [
                Security.kSecClass as String: Security.kSecClassGenericPassword, Security.kSecAttrService as String: service, Security.kSecAttrAccount as String: "second",
                Security.kSecAttrAccessible as String: Security.kSecAttrAccessibleWhenUnlocked, Security.kSecValueData as String: Data("added".utf8),
            ]
            #expect(SecItemAdd(added as CFDictionary, nil) == errSecSuccess)
            #expect(try valet.string(forKey: "second") == "added")
            #expect(try valet.allKeys() == ["token", "second"])
        }
    }
}
