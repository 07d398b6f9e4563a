import Foundation
import KeychainCore
import KeychainTestSupport
import LocalAuthentication
import Security
import Testing

/// Items under a SecAccessControl, read through LAContext and kSecUseAuthenticationUI, on the
/// vault's presence sealing (the proof is the vault passphrase); LAContext on its own.
@Suite("SecAccessControl and LAContext", .serialized)
struct AccessControlTests {
    func withPassphraseVault(_ body: () throws -> Void) throws {
        let store = try TestStore(.vault, passphrase: "vault passphrase")
        try DefaultStore.withStore(store.store, body)
    }

    func addProtected() -> OSStatus {
        var error: Unmanaged<CFError>?
        let control = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, &error)
        let item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bank", kSecAttrAccount as String: "me",
            kSecAttrAccessControl as String: control!, kSecValueData as String: Data("pin".utf8),
        ]
        return SecItemAdd(item as CFDictionary, nil)
    }

    func read(_ extra: [String: Any]) -> (OSStatus, Data?) {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bank", kSecAttrAccount as String: "me", kSecReturnData as String: true,
        ]
        query.merge(extra) { $1 }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result as? Data)
    }

    @Test("a protected item: read through an LAContext whose proof serves the next read, refused when interaction is not allowed, cancelled or wrong")
    func protectedItems() throws {
        try withPassphraseVault {
            #expect(addProtected() == errSecSuccess)
            let scripted = ScriptedAuthenticator([.passphrase("vault passphrase")])
            PresenceAuthentication.withAuthenticator(scripted) {
                let context = LAContext()
                context.localizedReason = "Show the PIN"
                let first = read([kSecUseAuthenticationContext as String: context])
                #expect(first.0 == errSecSuccess && first.1 == Data("pin".utf8))
                #expect(read([kSecUseAuthenticationContext as String: context]).1 == Data("pin".utf8))
                #expect(scripted.promptCount == 1 && scripted.requests.first?.reason == "Show the PIN")
                context.invalidate()

                let silent = LAContext()
                silent.interactionNotAllowed = true
                #expect(read([kSecUseAuthenticationContext as String: silent]).0 == errSecInteractionNotAllowed)
                #expect(read([kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]).0 == errSecInteractionNotAllowed)
                #expect(scripted.promptCount == 1)

                scripted.script(.cancel)
                #expect(read([kSecUseAuthenticationContext as String: LAContext()]).0 == errSecUserCanceled)
                scripted.script(.passphrase("wrong"))
                #expect(read([kSecUseAuthenticationContext as String: LAContext()]).0 == errSecAuthFailed)
            }
        }
    }

    @Test("LAContext.evaluatePolicy asks the presence authenticator; biometry is refused without a biometric one; an invalidated context evaluates nothing")
    func evaluatePolicy() async throws {
        let scripted = ScriptedAuthenticator([.passphrase("anything"), .cancel])
        PresenceAuthentication.setDefault(scripted)
        defer { PresenceAuthentication.setDefault(TerminalAuthenticator()) }
        let context = LAContext()
        #expect(try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Unlock"))
        await #expect(throws: LAError(.userCancel)) { try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Unlock") }
        var error: NSError?
        #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        #expect(error?.code == LAError.Code.biometryNotAvailable.rawValue)
        await #expect(throws: LAError(.biometryNotAvailable)) { try await context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "") }
        context.invalidate()
        await #expect(throws: LAError(.invalidContext)) { try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "") }
        #expect(scripted.requests.first?.reason == "Unlock")
    }
}
