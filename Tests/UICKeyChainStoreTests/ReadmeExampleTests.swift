import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
import UICKeyChainStore

/// The seed README's examples, in Swift as the Objective-C API imports, on a private vault.
@Suite("UICKeyChainStore README examples")
struct UICKeyChainStoreReadmeExamples {
    @Test("saving, reading and removing application and internet passwords; label, comment, accessibility, sharing, sync, generatePassword")
    func examples() throws {
        let testStore = try TestStore(.vault)
        try DefaultStore.withStore(testStore.store) {
            // Saving Application Password
            let keychain = UICKeyChainStore(service: "com.example.github-token")
            keychain["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"

            // Saving Internet Password
            let web = UICKeyChainStore(server: URL(string: "https://github.com")!, protocolType: .HTTPS)
            web["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"
            _ = UICKeyChainStore(server: URL(string: "https://github.com")!, protocolType: .HTTPS, authenticationType: .htmlForm)

            // Adding an item: set method, error handling
            #expect(keychain.setString("01234567-89ab-cdef-0123-456789abcdef", forKey: "kishikawakatsumi"))
            try keychain.setString("01234567-89ab-cdef-0123-456789abcdef", forKey: "kishikawakatsumi", error: ())

            // Obtaining an item
            let token = keychain["kishikawakatsumi"]
            #expect(token == "01234567-89ab-cdef-0123-456789abcdef")
            #expect(keychain.string(forKey: "kishikawakatsumi") == token)
            #expect(keychain.data(forKey: "kishikawakatsumi") == Data("01234567-89ab-cdef-0123-456789abcdef".utf8))
            do {
                _ = try keychain.string(forKey: "", error: ())
                Issue.record("an empty key must be an error")
            } catch {
                #expect(!error.localizedDescription.isEmpty)
            }

            // Removing an item
            keychain["kishikawakatsumi"] = nil
            #expect(keychain.removeItem(forKey: "kishikawakatsumi"))
            try keychain.removeItem(forKey: "kishikawakatsumi", error: ())

            // Label and Comment
            #expect(
                web.setString(
                    "01234567-89ab-cdef-0123-456789abcdef", forKey: "kishikawakatsumi",
                    label: "github.com (kishikawakatsumi)", comment: "github access token"))

            // Accessibility: background and foreground applications
            let background = UICKeyChainStore(service: "com.example.github-token")
            background.accessibility = .afterFirstUnlock
            background["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"
            let foreground = UICKeyChainStore(service: "com.example.github-token")
            foreground.accessibility = .whenUnlocked
            foreground["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"

            // Sharing Keychain items
            let shared = UICKeyChainStore(service: "kishikawakatsumi.git", accessGroup: "12ABCD3E4F.shared")
            shared["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"
            #expect(UICKeyChainStore(service: "kishikawakatsumi.git", accessGroup: "12ABCD3E4F.shared")["kishikawakatsumi"] != nil)

            // Synchronizing Keychain items with iCloud
            let synced = UICKeyChainStore(service: "com.example.github-token")
            synced.synchronizable = true
            synced["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"
            #expect(synced.itemDictionaries.first?["synchronizable"] as? Bool == true)

            // Generate strong random password
            let password = UICKeyChainStore.generatePassword()
            #expect(password.count == 15)
        }
    }
}
