import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
import UICKeyChainStore

/// UICKeyChainStore's own test cases (reference §2.3), written once and run on every store.
enum UICKeyChainStoreBehaviour: String, CaseIterable, Sendable {
    case genericPassword, genericPasswordSubscripting, internetPassword, internetPasswordSubscripting
    case initializers, contains, setAndRemove, nilMeansRemove, listing, classLevelListing
    case labelAndComment, description, conversionError, argumentError, serviceIsolation
    case classLevelSettersReportErrors, accessibilityAndSynchronizable, missingIsNil, sharedWebCredentials

    static let server = URL(string: "https://kishikawakatsumi.com")!

    func run(_ testStore: TestStore) throws {
        try DefaultStore.withStore(testStore.store) { try body(testStore) }
    }

    private func body(_ testStore: TestStore) throws {
        switch self {
        case .genericPassword:
            let store = UICKeyChainStore(service: "Twitter")
            #expect(store.setString("password1234", forKey: "kishikawakatsumi"))
            #expect(store.setString("p@ssw0rd", forKey: "hirohamada"))
            #expect(store.string(forKey: "kishikawakatsumi") == "password1234")
            #expect(store.string(forKey: "hirohamada") == "p@ssw0rd")
            #expect(store.setString("1234password", forKey: "kishikawakatsumi"), "the update path")
            #expect(store.string(forKey: "kishikawakatsumi") == "1234password")
            #expect(store.removeItem(forKey: "kishikawakatsumi"))
            #expect(store.string(forKey: "kishikawakatsumi") == nil)
            #expect(store.string(forKey: "hirohamada") == "p@ssw0rd")
            #expect(store.removeAllItems() && store.keyList.isEmpty)

        case .genericPasswordSubscripting:
            let store = UICKeyChainStore(service: "Twitter", accessGroup: "27AEDK3C9F.shared")
            store["kishikawakatsumi"] = "password1234"
            store["hirohamada"] = "p@ssw0rd"
            #expect(store["kishikawakatsumi"] == "password1234" && store["hirohamada"] == "p@ssw0rd")
            store["kishikawakatsumi"] = "1234password"
            #expect(store["kishikawakatsumi"] == "1234password")
            store["kishikawakatsumi"] = nil
            #expect(store["kishikawakatsumi"] == nil && store["hirohamada"] == "p@ssw0rd")
            #expect(UICKeyChainStore(service: "Twitter")["hirohamada"] == "p@ssw0rd", "a store naming no group finds items of every group")
            #expect(UICKeyChainStore(service: "Twitter", accessGroup: "OTHER.shared")["hirohamada"] == nil)

        case .internetPassword:
            let store = UICKeyChainStore(server: Self.server, protocolType: .HTTPS)
            #expect(store.setString("password1234", forKey: "kishikawakatsumi"))
            #expect(store.setString("p@ssw0rd", forKey: "hirohamada"))
            #expect(store.string(forKey: "kishikawakatsumi") == "password1234")
            #expect(store.setString("1234password", forKey: "kishikawakatsumi"))
            #expect(store.string(forKey: "kishikawakatsumi") == "1234password")
            #expect(store.removeItem(forKey: "kishikawakatsumi") && store.string(forKey: "kishikawakatsumi") == nil)
            #expect(UICKeyChainStore(server: Self.server, protocolType: .HTTP).string(forKey: "hirohamada") == nil, "another protocol is another item")
            #expect(UICKeyChainStore(service: "kishikawakatsumi.com").string(forKey: "hirohamada") == nil, "generic and internet passwords are apart")

        case .internetPasswordSubscripting:
            let store = UICKeyChainStore(server: Self.server, protocolType: .HTTPS, authenticationType: .htmlForm)
            store["kishikawakatsumi"] = "password1234"
            #expect(store["kishikawakatsumi"] == "password1234")
            store["kishikawakatsumi"] = nil
            #expect(store["kishikawakatsumi"] == nil)

        case .initializers:
            let plain = UICKeyChainStore(service: nil)
            #expect(plain.service == UICKeyChainStore.defaultService() && plain.accessGroup == nil && plain.itemClass == .genericPassword)
            let grouped = UICKeyChainStore(service: "Twitter", accessGroup: "27AEDK3C9F.shared")
            #expect(grouped.service == "Twitter" && grouped.accessGroup == "27AEDK3C9F.shared")
            let web = UICKeyChainStore(server: Self.server, protocolType: .HTTPS)
            #expect(web.server == Self.server && web.protocolType == .HTTPS && web.authenticationType == .default && web.itemClass == .internetPassword)
            let form = UICKeyChainStore(server: Self.server, protocolType: .HTTPS, authenticationType: .htmlForm)
            #expect(form.authenticationType == .htmlForm)
            #expect(plain.accessibility == .afterFirstUnlock && plain.authenticationPolicy == nil && plain.useAuthenticationUI && !plain.synchronizable)

        case .contains:
            let store = UICKeyChainStore(service: "Twitter")
            #expect(!store.contains("kishikawakatsumi"))
            store["kishikawakatsumi"] = "password1234"
            #expect(store.contains("kishikawakatsumi") && !store.contains(nil) && !store.contains(""))

        case .setAndRemove:
            let store = UICKeyChainStore(service: "Twitter")
            try store.setString("password1234", forKey: "username", error: ())
            #expect(try store.string(forKey: "username", error: ()) == "password1234")
            try store.setData(Data("data".utf8), forKey: "data", error: ())
            #expect(try store.data(forKey: "data", error: ()) == Data("data".utf8))
            try store.removeItem(forKey: "username", error: ())
            try store.removeItem(forKey: "username", error: ())  // removing an absent item succeeds
            try store.removeAllItemsWithError()
            #expect(store.keyList.isEmpty)

        case .nilMeansRemove:
            let store = UICKeyChainStore(service: "Twitter")
            store["a"] = "1"; store["b"] = "2"; store["c"] = "3"
            #expect(store.setString(nil, forKey: "a"))
            #expect(store.setData(nil, forKey: "b"))
            #expect(Set(store.keyList) == ["c"])
            #expect(UICKeyChainStore.setString("x", forKey: "k", service: "Twitter"))
            #expect(UICKeyChainStore.setString(nil, forKey: "k", service: "Twitter"))
            #expect(UICKeyChainStore.string(forKey: "k", service: "Twitter") == nil)

        case .listing:
            let store = UICKeyChainStore(service: "github.com")
            store["kishikawakatsumi"] = "01234567-89ab-cdef-0123-456789abcdef"
            store["hirohamada"] = "11111111-89ab-cdef-0123-456789abcdef"
            store["honeylemon"] = "22222222-89ab-cdef-0123-456789abcdef"
            #expect(Set(store.keyList) == ["kishikawakatsumi", "hirohamada", "honeylemon"])
            let items = store.itemDictionaries
            #expect(items.count == 3)
            let item = try #require(items.first { $0["key"] as? String == "hirohamada" })
            #expect(item["value"] as? String == "11111111-89ab-cdef-0123-456789abcdef")
            #expect(item["service"] as? String == "github.com" && item["class"] as? String == "GenericPassword")
            #expect(item["accessibility"] as? String == "ck" && item["synchronizable"] as? Bool == false && item["accessGroup"] as? String == "")
            let web = UICKeyChainStore(server: URL(string: "https://github.com")!, protocolType: .HTTPS)
            web["a"] = "1"; web["b"] = "2"; web["c"] = "3"
            #expect(Set(web.keyList) == ["a", "b", "c"])
            let webItem = try #require(web.itemDictionaries.first { $0["key"] as? String == "a" })
            #expect(webItem["server"] as? String == "github.com" && webItem["protocol"] as? String == "htps" && webItem["authenticationType"] as? String == "dflt")

        case .classLevelListing:
            UICKeyChainStore(service: "github.com")["kishikawakatsumi"] = "token"
            UICKeyChainStore(server: URL(string: "https://github.com")!, protocolType: .HTTPS)["hirohamada"] = "web"
            let generic = (UICKeyChainStore.allKeys(with: .genericPassword) ?? [])
            #expect(generic.contains(["service": "github.com", "key": "kishikawakatsumi"]))
            let internet = (UICKeyChainStore.allKeys(with: .internetPassword) ?? [])
            #expect(internet.contains(["server": "github.com", "key": "hirohamada"]), "the server is reported (UICKeyChainStore gave an empty one)")
            #expect(((UICKeyChainStore.allItems(with: .internetPassword) ?? []).compactMap { $0 as? [String: Any] }).contains { $0["value"] as? String == "web" })

        case .labelAndComment:
            let store = UICKeyChainStore(server: URL(string: "https://github.com")!, protocolType: .HTTPS)
            #expect(store.setString("01234567-89ab-cdef-0123-456789abcdef", forKey: "kishikawakatsumi", label: "github.com (kishikawakatsumi)", comment: "github access token"))
            var attributes = try #require(testStore.store.copyMatching(Query(.internetPassword, attributes: Attributes(account: "kishikawakatsumi", server: "github.com"))).first)
                .attributes
            #expect(attributes.label == "github.com (kishikawakatsumi)" && attributes.comment == "github access token")
            #expect(store.setData(Data("x".utf8), forKey: "kishikawakatsumi", label: nil, comment: nil), "nil keeps them")
            attributes = try #require(testStore.store.copyMatching(Query(.internetPassword, attributes: Attributes(account: "kishikawakatsumi", server: "github.com"))).first)
                .attributes
            #expect(attributes.label == "github.com (kishikawakatsumi)" && attributes.comment == "github access token")

        case .description:
            let store = UICKeyChainStore(service: "Twitter")
            #expect(store.description == "()")
            store["username"] = "password"
            // UICKeyChainStore's layout: "(\n", then "    " and each item as NSDictionary prints
            // itself, nothing between items, then ")"; strings with a '.' quoted.
            #expect(
                store.description == """
                    (
                        {
                        accessGroup = "";
                        accessibility = ck;
                        class = GenericPassword;
                        key = username;
                        service = Twitter;
                        synchronizable = 0;
                        value = "<redacted>";
                    })
                    """)
            let web = UICKeyChainStore(server: URL(string: "https://github.com")!, protocolType: .HTTPS)
            web["kishikawakatsumi"] = "token"
            web["hirohamada"] = "token"
            #expect(web.description.hasPrefix("(\n    {\n    accessibility = ck;\n    authenticationType = dflt;\n    class = InternetPassword;\n"), "\(web.description)")
            #expect(
                web.description.contains("    server = \"github.com\";\n") && web.description.contains("})") && web.description.contains("}    {"),
                "\(web.description)")
            #expect(!store.debugDescription.contains("password\n") && !store.description.contains("= password;"))

        case .conversionError:
            let store = UICKeyChainStore(service: "Twitter")
            #expect(store.setData(Data([0xff, 0xfe, 0xfd]), forKey: "binary"))
            #expect(store.string(forKey: "binary") == nil)
            #expect(store.data(forKey: "binary") == Data([0xff, 0xfe, 0xfd]))
            expectError(-67594) { _ = try store.string(forKey: "binary", error: ()) }

        case .argumentError:
            let store = UICKeyChainStore(service: "Twitter")
            expectError(1) { try store.setString("x", forKey: "", error: ()) }
            expectError(1) { _ = try store.string(forKey: "", error: ()) }
            expectError(1) { try store.removeItem(forKey: "", error: ()) }
            #expect(!store.setString("x", forKey: ""))

        case .serviceIsolation:
            let stores = ["", "com.kishikawakatsumi.KeychainAccess", "example.com"].map { UICKeyChainStore(service: $0) }
            for (index, store) in stores.enumerated() { store["username"] = "password\(index)" }
            for (index, store) in stores.enumerated() { #expect(store["username"] == "password\(index)") }
            #expect(UICKeyChainStore.string(forKey: "username", service: "example.com") == "password2")

        case .classLevelSettersReportErrors:
            expectError(1) { try UICKeyChainStore.setString("x", forKey: "", service: "Twitter", error: ()) }
            expectError(1) { try UICKeyChainStore.setData(Data("x".utf8), forKey: "", service: "Twitter", accessGroup: nil, error: ()) }
            try UICKeyChainStore.setString("x", forKey: "k", service: "Twitter", error: ())
            #expect(try UICKeyChainStore.string(forKey: "k", service: "Twitter", error: ()) == "x")
            try UICKeyChainStore.removeAllItems(forService: "Twitter", error: ())
            #expect(UICKeyChainStore.string(forKey: "k", service: "Twitter") == nil)

        case .accessibilityAndSynchronizable:
            let store = UICKeyChainStore(service: "com.example.github-token")
            store["kishikawakatsumi"] = "token"
            #expect(store.itemDictionaries.first?["accessibility"] as? String == "ck")
            store.accessibility = .whenUnlocked
            store["kishikawakatsumi"] = "token2"
            #expect(store.itemDictionaries.first?["accessibility"] as? String == "ak", "an update applies the new accessibility")
            store.synchronizable = true
            store["kishikawakatsumi"] = "token3"
            let items = store.itemDictionaries
            #expect(
                items.count == 1 && items[0]["synchronizable"] as? Bool == true && items[0]["value"] as? String == "token3",
                "the existing item becomes synchronizable; no second item")

        case .missingIsNil:
            let store = UICKeyChainStore(service: "Twitter")
            #expect(store.string(forKey: "nobody") == nil && store.data(forKey: "nobody") == nil && store["nobody"] == nil)
            expectError(-25300) { _ = try store.data(forKey: "nobody", error: ()) }

        case .sharedWebCredentials:
            let store = UICKeyChainStore(server: Self.server, protocolType: .HTTPS)
            let errors = Collector<Int>()
            store.sharedPassword { account, password, error in
                #expect(account == nil && password == nil)
                errors.add((error as NSError?)?.code ?? 0)
            }
            store.sharedPassword(forAccount: "kishikawakatsumi@mac.com") { password, error in
                #expect(password == nil)
                errors.add((error as NSError?)?.code ?? 0)
            }
            store.setSharedPassword("x", forAccount: "a") { errors.add(($0 as NSError?)?.code ?? 0) }
            store.removeSharedPassword(forAccount: "a") { errors.add(($0 as NSError?)?.code ?? 0) }
            UICKeyChainStore.requestSharedWebCredential { credentials, error in
                #expect(credentials.isEmpty)
                errors.add((error as NSError?)?.code ?? 0)
            }
            #expect(errors.all == [-4, -4, -4, -4, -4])
        }
    }
}

/// Expects `body` to throw an NSError of UICKeyChainStore's domain with `code`.
func expectError(_ code: Int, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected error \(code)", sourceLocation: sourceLocation)
    } catch {
        let error = error as NSError
        #expect(error.domain == UICKeyChainStoreErrorDomain && error.code == code, "\(error)", sourceLocation: sourceLocation)
    }
}

@Suite("UICKeyChainStore on the vault: its own test cases")
struct UICKeyChainStoreOnVault {
    @Test(arguments: UICKeyChainStoreBehaviour.allCases)
    func behaviour(_ behaviour: UICKeyChainStoreBehaviour) throws {
        try behaviour.run(TestStore(.vault))
    }
}

@Suite(
    "UICKeyChainStore on the Secret Service: its own test cases",
    .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
struct UICKeyChainStoreOnSecretService {
    @Test(arguments: UICKeyChainStoreBehaviour.allCases)
    func behaviour(_ behaviour: UICKeyChainStoreBehaviour) throws {
        try behaviour.run(TestStore(.secretService))
    }
}

extension UICKeyChainStore {
    /// `allItems` as the dictionaries its elements are (the header's untyped `NSArray`).
    var itemDictionaries: [[String: Any]] { (allItems ?? []).compactMap { $0 as? [String: Any] } }
    /// `allKeys`, empty when nil.
    var keyList: [String] { allKeys ?? [] }
}
