import Foundation
import KeychainCore
import KeychainTestSupport
import Locksmith
import Testing

// The seed README's TwitterAccount types. Changed only where Locksmith 4 differs from that
// older README: `data` is `[String: Any]` (not `[String: AnyObject]`), enum cases are lower
// camel case (`.https`, `.httpBasic`), the static calls take their `data:`/`userAccount:`
// labels, and the stored properties need their types spelled out (`let internetProtocol:
// LocksmithInternetProtocol = .https`), since a bare `.https` has no type to infer from.

struct TwitterAccount: CreateableSecureStorable, GenericPasswordSecureStorable {
    let username: String
    let password: String

    // Required by GenericPasswordSecureStorable
    let service = "Twitter"
    var account: String { return username }

    // Required by CreateableSecureStorable
    var data: [String: Any] {
        return ["password": password]
    }
}

struct TwitterAccountCRD: ReadableSecureStorable, CreateableSecureStorable, DeleteableSecureStorable, GenericPasswordSecureStorable {
    let username: String
    let password: String

    let service = "Twitter"
    var account: String { return username }
    var data: [String: Any] {
        return ["password": password]
    }
}

struct TwitterInternetAccount: InternetPasswordSecureStorable, ReadableSecureStorable, CreateableSecureStorable {
    let username: String
    let password: String

    var account: String { return username }
    var data: [String: Any] {
        return ["password": password]
    }

    let server = "com.twitter"
    let port = 80
    let internetProtocol: LocksmithInternetProtocol = .https
    let authenticationType: LocksmithInternetAuthenticationType = .httpBasic
    let path: String? = "/api/2.0/"
}

@Suite("Locksmith README examples")
struct LocksmithReadmeExamples {
    @Test("quick start, the three TwitterAccount types and the typed results")
    func examples() throws {
        let testStore = try TestStore(.vault)
        try DefaultStore.withStore(testStore.store) {
            // Quick start
            try Locksmith.saveData(data: ["some key": "some value"], forUserAccount: "myUserAccount")
            let dictionary = Locksmith.loadDataForUserAccount(userAccount: "myUserAccount")
            #expect(dictionary?["some key"] as? String == "some value")
            try Locksmith.updateData(data: ["some key": "another value"], forUserAccount: "myUserAccount")
            #expect(Locksmith.loadDataForUserAccount(userAccount: "myUserAccount")?["some key"] as? String == "another value")
            try Locksmith.deleteDataForUserAccount(userAccount: "myUserAccount")

            // The power of protocols
            let account = TwitterAccount(username: "_matthewpalmer", password: "my_password")
            try account.createInSecureStore()

            let crd = TwitterAccountCRD(username: "_matthewpalmer", password: "my_password")
            let result = crd.readFromSecureStore()
            #expect(result?.data?["password"] as? String == "my_password")
            try crd.deleteFromSecureStore()
            try crd.createInSecureStore()
            try crd.deleteFromSecureStore()

            // Result types
            let web = TwitterInternetAccount(username: "_matthewpalmer", password: "my_password")
            try web.createInSecureStore()
            let webResult: InternetPasswordSecureStorableResultType? = web.readFromSecureStore()
            #expect(webResult?.port == 80)  // an Int directly
            #expect(webResult?.internetProtocol == .https)  // a LocksmithInternetProtocol directly
            #expect(webResult?.authenticationType == .httpBasic)
            #expect(webResult?.path == "/api/2.0/")
            #expect(webResult?.data?["password"] as? String == "my_password")
        }
    }
}
