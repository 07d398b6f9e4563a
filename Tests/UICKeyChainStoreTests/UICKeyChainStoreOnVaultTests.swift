import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
import UICKeyChainStore

@Suite("UICKeyChainStore: what only the vault can do, and the password generator")
struct UICKeyChainStoreVaultTests {
    @Test("userPresence: each read asks the authenticator with authenticationPrompt; contains does not; useAuthenticationUI = false fails without asking")
    func userPresence() throws {
        let testStore = try TestStore(.vault, passphrase: "uic-tests")
        let authenticator = ScriptedAuthenticator([.passphrase("uic-tests"), .cancel])
        PresenceAuthentication.withAuthenticator(authenticator) {
            DefaultStore.withStore(testStore.store) {
                let keychain = UICKeyChainStore(service: "com.example.github-token")
                keychain.setAccessibility(.whenPasscodeSetThisDeviceOnly, authenticationPolicy: .userPresence)
                keychain.authenticationPrompt = "Authenticate to update your access token"
                keychain["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"
                #expect(authenticator.promptCount == 0 && keychain.contains("kishikawakatsumi"))
                #expect(keychain["kishikawakatsumi"] == "01234567-89ab-cdef-0123-456789abcdef")
                #expect(authenticator.requests.first?.reason == "Authenticate to update your access token")
                expectError(-128) { _ = try keychain.string(forKey: "kishikawakatsumi", error: ()) }
                keychain.useAuthenticationUI = false
                expectError(-25308) { _ = try keychain.string(forKey: "kishikawakatsumi", error: ()) }
                #expect(authenticator.promptCount == 2)
                keychain["kishikawakatsumi"] = nil
                #expect(!keychain.contains("kishikawakatsumi"), "removing needs no proof")
            }
        }
    }

    @Test("userPresence and synchronizable together are refused, as UICKeyChainStore warns; Touch ID needs a biometric authenticator")
    func policyLimits() throws {
        let testStore = try TestStore(.vault, passphrase: "uic-tests")
        DefaultStore.withStore(testStore.store) {
            let keychain = UICKeyChainStore(service: "s")
            keychain.setAccessibility(.whenPasscodeSetThisDeviceOnly, authenticationPolicy: .userPresence)
            keychain.synchronizable = true
            expectError(1) { try keychain.setString("x", forKey: "k", error: ()) }
            keychain.synchronizable = false
            keychain.setAccessibility(.whenPasscodeSetThisDeviceOnly, authenticationPolicy: .touchIDAny)
            expectError(-25291) { try keychain.setString("x", forKey: "k", error: ()) }
        }
    }

    @Test("a class-level setter reports a store failure (a locked vault) instead of swallowing it")
    func classLevelFailure() throws {
        let testStore = try TestStore(.vault, passphrase: "uic-tests")
        testStore.vault!.lock()
        DefaultStore.withStore(testStore.store) {
            expectError(-25308) { try UICKeyChainStore.setString("x", forKey: "k", service: "s", error: ()) }
            #expect(!UICKeyChainStore.setString("x", forKey: "k", service: "s"))
        }
    }

    @Test("generatePassword: Safari's xxx-xxx-xxx-xxx from its alphabet, with a lowercase, an uppercase and a digit, never twice")
    func generatePassword() {
        let alphabet = Set("abcdefghkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var seen = Set<String>()
        for _ in 0..<2_000 {
            let password = UICKeyChainStore.generatePassword()
            let groups = password.split(separator: "-", omittingEmptySubsequences: false)
            #expect(password.count == 15 && groups.count == 4 && groups.allSatisfy { $0.count == 3 })
            #expect(password.filter { $0 != "-" }.allSatisfy(alphabet.contains))
            #expect(password.contains(where: \.isLowercase) && password.contains(where: \.isUppercase) && password.contains { "3456789".contains($0) })
            seen.insert(password)
        }
        #expect(seen.count == 2_000)
        // Uniqueness over 100,000 draws and the chi-square test of uniformity run on the
        // generator itself: PasswordGeneratorTests in KeychainCoreTests.
    }
}
