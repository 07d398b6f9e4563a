import Foundation
import KeychainCore
import KeychainTestSupport
import Locksmith
import Testing

/// As in Apple's keychain, an attribute a type does not declare is not matched: a read or a
/// delete through a type that names no path, security domain or access group finds items
/// that have them.
enum UndeclaredAttributes {
    struct FullWeb: CreateableSecureStorable, ReadableSecureStorable, DeleteableSecureStorable, InternetPasswordSecureStorable {
        let account = "bob", server = "example.com", port = 443
        let internetProtocol: LocksmithInternetProtocol = .https
        let authenticationType: LocksmithInternetAuthenticationType = .httpBasic
        var path: String? { "/login" }
        var securityDomain: String? { "realm" }
        var data: [String: Any] { ["token": "web"] }
    }

    struct PlainWeb: ReadableSecureStorable, DeleteableSecureStorable, InternetPasswordSecureStorable {
        let account = "bob", server = "example.com", port = 443
        let internetProtocol: LocksmithInternetProtocol = .https
        let authenticationType: LocksmithInternetAuthenticationType = .httpBasic
    }

    struct GroupAccount: CreateableSecureStorable, ReadableSecureStorable, DeleteableSecureStorable, GenericPasswordSecureStorable {
        let service = "grouped", account = "alice"
        var accessGroup: String? { "AppID12345.Druidia" }
        var data: [String: Any] { ["token": "grouped"] }
    }

    struct PlainAccount: ReadableSecureStorable, DeleteableSecureStorable, GenericPasswordSecureStorable {
        let service = "grouped", account = "alice"
    }

    static func run(_ testStore: TestStore) throws {
        try DefaultStore.withStore(testStore.store) {
            try FullWeb().createInSecureStore()
            let found = PlainWeb().readFromSecureStore()
            #expect(found?.data?["token"] as? String == "web", "an internet password with path and security domain is found without them")
            try PlainWeb().deleteFromSecureStore()
            #expect(FullWeb().readFromSecureStore() == nil)

            try GroupAccount().createInSecureStore()
            #expect(PlainAccount().readFromSecureStore()?.data?["token"] as? String == "grouped", "found without naming its access group")
            #expect(Locksmith.loadDataForUserAccount(userAccount: "alice", inService: "grouped")?["token"] as? String == "grouped")
            try Locksmith.deleteDataForUserAccount(userAccount: "alice", inService: "grouped")
            #expect(GroupAccount().readFromSecureStore() == nil)
        }
    }
}

@Suite("Locksmith: attributes a type does not declare are not matched")
struct UndeclaredAttributesTests {
    @Test("on the vault") func vault() throws { try UndeclaredAttributes.run(TestStore(.vault)) }

    @Test("on the Secret Service", .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
    func secretService() throws { try UndeclaredAttributes.run(TestStore(.secretService)) }
}
