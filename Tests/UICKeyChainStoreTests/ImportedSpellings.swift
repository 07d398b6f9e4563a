import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
import UICKeyChainStore

/// Compiles only if the public surface spells what Swift imports from UICKeyChainStore's
/// header: each line is code written for UICKeyChainStore on Apple platforms.
func uicKeyChainStoreSpellings(_ store: UICKeyChainStore, optionalKey: String?) {
    let protocols: [UICKeyChainStoreProtocolType] = [.ftpAccount, .httpProxy, .httpsProxy, .ftpProxy, .rtspProxy, .HTTPS, .FTP, .appleTalk, .telnetS, .POP3S]
    let types: [UICKeyChainStoreAuthenticationType] = [.NTLM, .MSN, .DPA, .RPA, .httpBasic, .httpDigest, .htmlForm, .default]
    _ = store.setString("value", forKey: optionalKey)
    _ = store.setString("value", forKey: optionalKey, label: "label", comment: "comment")
    _ = store.allKeys?.count
    _ = store.allItems?.count
    _ = UICKeyChainStore.allKeys(with: .genericPassword)?.count
    _ = UICKeyChainStore.allItems(with: .internetPassword)?.count
    let policy: UICKeyChainStoreAuthenticationPolicy? = UICKeyChainStoreAuthenticationPolicy(rawValue: 1)
    if let policy { store.setAccessibility(.whenPasscodeSetThisDeviceOnly, authenticationPolicy: policy) }
    switch store.authenticationPolicy {
    case .userPresence?, .touchIDAny?, .touchIDCurrentSet?, .devicePasscode?: break
    case .controlOr?, .controlAnd?, .privateKeyUsage?, .applicationPassword?, nil: break
    }
    _ = (protocols, types, UICKeyChainStoreErrorCode.invalidArguments, UICKeyChainStoreItemClass.internetPassword)
}

@Suite("UICKeyChainStore as Swift imports its header")
struct UICKeyChainStoreImportedSurface {
    @Test("the authentication policy is an NS_ENUM: one case per value, nil for any other")
    func policyIsAnEnum() {
        #expect(UICKeyChainStoreAuthenticationPolicy(rawValue: 1) == .userPresence)
        #expect(UICKeyChainStoreAuthenticationPolicy(rawValue: 1 << 4) == .devicePasscode)
        #expect(UICKeyChainStoreAuthenticationPolicy(rawValue: 3) == nil, "a combination is not a case")
        #expect(UICKeyChainStoreAuthenticationPolicy(rawValue: 0) == nil)
        #expect(UICKeyChainStoreProtocolType.ftpAccount.rawValue == 2 && UICKeyChainStoreProtocolType.rtspProxy.rawValue == 22)
    }

    func optionalKey(on testStore: TestStore) {
        DefaultStore.withStore(testStore.store) {
            let store = UICKeyChainStore(service: "Twitter")
            let missing: String? = nil
            #expect(!store.setString("value", forKey: missing))
            #expect(store.setString("value", forKey: Optional("present")))
            #expect(store.allKeys == ["present"] && store.allItems?.count == 1)
            uicKeyChainStoreSpellings(store, optionalKey: "spelled")
        }
    }

    @Test("an optional key compiles; a nil one stores nothing and says so, on the vault")
    func optionalKeyOnVault() throws { optionalKey(on: try TestStore(.vault)) }

    @Test(
        "an optional key compiles; a nil one stores nothing and says so, on the Secret Service",
        .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
    func optionalKeyOnSecretService() throws { optionalKey(on: try TestStore(.secretService)) }
}
