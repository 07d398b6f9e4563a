import Foundation
import KeychainCore
import KeychainTestSupport
import Locksmith
import Testing

// Locksmith's own test types (Tests/LocksmithTests), with its account and service.
let testAccount = "myUser"
let testService = "myService"

struct CreateableGenericPassword: CreateableSecureStorable, GenericPasswordSecureStorable {
    let account = testAccount
    let service = testService
    var data: [String: Any] = ["some": "data"]
}

struct ReadableGenericPassword: ReadableSecureStorable, GenericPasswordSecureStorable {
    let account = testAccount
    let service = testService
}

struct DeleteableGenericPassword: DeleteableSecureStorable, GenericPasswordSecureStorable {
    let account = testAccount
    let service = testService
}

struct AllThree: ReadableSecureStorable, CreateableSecureStorable, DeleteableSecureStorable, GenericPasswordSecureStorable {
    let account = testAccount
    let service = testService
    var data: [String: Any] = ["one": "two"]
}

struct MetaGenericPassword: CreateableSecureStorable, ReadableSecureStorable, DeleteableSecureStorable, GenericPasswordSecureStorable {
    let account = testAccount
    let service = testService
    var data: [String: Any] = ["a": "b"]
    var accessible: LocksmithAccessibleOption? = .always
    let accessGroup: String? = "AppID.group"
    let creator: UInt? = 5
    let type: UInt? = 10
    let comment: String? = "this is a comment"
    let description: String? = "this is the description"
    let isInvisible: Bool? = false
    let isNegative: Bool? = false
}

struct WebPassword: CreateableSecureStorable, ReadableSecureStorable, DeleteableSecureStorable, InternetPasswordSecureStorable {
    let account = testAccount
    let server = "server"
    let port = 8080
    var internetProtocol = LocksmithInternetProtocol.ftp
    var authenticationType = LocksmithInternetAuthenticationType.httpBasic
    let path: String? = "some_path"
    let securityDomain: String? = "secdomain"
    var accessible: LocksmithAccessibleOption? = nil
    var accessGroup: String? = nil
    var data: [String: Any] = ["some": "data"]
}

/// Locksmith's 13 test cases (reference §1.3), written once and run on every store.
enum LocksmithBehaviour: String, CaseIterable, Sendable {
    case staticMethods, staticMethodsForDefaultService, createForGenericPassword, updateCreatesIfNotExists
    case updateForGenericPassword, loadForGenericPassword, deleteForGenericPassword, conformanceToAll3Protocols
    case deleteForInternetPassword, genericMetaAttributes, internetMetaAttributes, internetAttributesApplied, genericOptionalAttributesApplied

    func run(_ testStore: TestStore) throws {
        try DefaultStore.withStore(testStore.store) {
            defer { try? Locksmith.deleteDataForUserAccount(userAccount: testAccount, inService: testService) }
            try body()
        }
    }

    private func body() throws {
        switch self {
        case .staticMethods, .staticMethodsForDefaultService:
            let serviceName = self == .staticMethods ? testService : LocksmithDefaultService
            defer { try? Locksmith.deleteDataForUserAccount(userAccount: testAccount, inService: serviceName) }
            try Locksmith.saveData(data: ["some key": "some value"], forUserAccount: testAccount, inService: serviceName)
            #expect(Locksmith.loadDataForUserAccount(userAccount: testAccount, inService: serviceName)?["some key"] as? String == "some value")
            try Locksmith.deleteDataForUserAccount(userAccount: testAccount, inService: serviceName)
            #expect(Locksmith.loadDataForUserAccount(userAccount: testAccount, inService: serviceName) == nil)
            try Locksmith.saveData(data: ["other key": "other value"], forUserAccount: testAccount, inService: serviceName)
            #expect(Locksmith.loadDataForUserAccount(userAccount: testAccount, inService: serviceName)?["other key"] as? String == "other value")
            try Locksmith.updateData(data: ["updated key": "updated value"], forUserAccount: testAccount, inService: serviceName)
            let updated = Locksmith.loadDataForUserAccount(userAccount: testAccount, inService: serviceName)
            #expect(updated?["updated key"] as? String == "updated value" && updated?["other key"] == nil, "each save replaces the dictionary whole")
            try Locksmith.deleteDataForUserAccount(userAccount: testAccount, inService: serviceName)
            try Locksmith.updateData(data: ["created": "by update"], forUserAccount: testAccount, inService: serviceName)
            #expect(Locksmith.loadDataForUserAccount(userAccount: testAccount, inService: serviceName)?["created"] as? String == "by update")
            if self == .staticMethodsForDefaultService {
                #expect(Locksmith.loadDataForUserAccount(userAccount: testAccount) != nil, "the default argument is LocksmithDefaultService")
            }

        case .createForGenericPassword:
            try CreateableGenericPassword().createInSecureStore()
            #expect(throws: LocksmithError.duplicate) { try CreateableGenericPassword().createInSecureStore() }

        case .updateCreatesIfNotExists:
            try CreateableGenericPassword(data: ["created": "by update"]).updateInSecureStore()
            #expect(Locksmith.loadDataForUserAccount(userAccount: testAccount, inService: testService)?["created"] as? String == "by update")

        case .updateForGenericPassword:
            var account = CreateableGenericPassword()
            try account.createInSecureStore()
            account.data = ["new": "data"]
            try account.updateInSecureStore()
            let read = ReadableGenericPassword().readFromSecureStore()
            #expect(read?.data?["new"] as? String == "data" && read?.data?["some"] == nil)

        case .loadForGenericPassword:
            try CreateableGenericPassword().createInSecureStore()
            let result = ReadableGenericPassword().readFromSecureStore()
            #expect(result?.account == testAccount && result?.service == testService && result?.data?["some"] as? String == "data")

        case .deleteForGenericPassword:
            try CreateableGenericPassword().createInSecureStore()
            try DeleteableGenericPassword().deleteFromSecureStore()
            #expect(Locksmith.loadDataForUserAccount(userAccount: testAccount, inService: testService) == nil)
            #expect(throws: LocksmithError.notFound) { try DeleteableGenericPassword().deleteFromSecureStore() }

        case .conformanceToAll3Protocols:
            let account = AllThree()
            try account.createInSecureStore()
            let result = account.readFromSecureStore()
            #expect(result?.account == testAccount && result?.service == testService && result?.data?["one"] as? String == "two")
            try account.deleteFromSecureStore()
            #expect(account.readFromSecureStore() == nil)
            try account.createInSecureStore()
            try account.deleteFromSecureStore()

        case .deleteForInternetPassword:
            let web = WebPassword(internetProtocol: .https, authenticationType: .dpa)
            try web.createInSecureStore()
            #expect(web.readFromSecureStore()?.server == "server")
            try web.deleteFromSecureStore()
            #expect(web.readFromSecureStore() == nil)

        case .genericMetaAttributes:
            let account = MetaGenericPassword(accessible: .afterFirstUnlock)
            try account.createInSecureStore()
            defer { try? account.deleteFromSecureStore() }
            let result = try #require(account.readFromSecureStore())
            #expect(result.creator == 5 && result.type == 10 && result.comment == "this is a comment" && result.description == "this is the description")
            #expect(result.generic == nil && result.isNegative == false && result.isInvisible == false)
            #expect(result.accessGroup == "AppID.group" && result.accessible == .afterFirstUnlock)

        case .internetMetaAttributes:
            let web = WebPassword()
            try web.createInSecureStore()
            defer { try? web.deleteFromSecureStore() }
            func check(_ result: InternetPasswordSecureStorableResultType?) {
                #expect(result?.account == testAccount && result?.server == "server" && result?.port == 8080)
                #expect(result?.internetProtocol == .ftp && result?.authenticationType == .httpBasic)
                #expect(result?.securityDomain == "secdomain" && result?.path == "some_path")
            }
            check(web.readFromSecureStore())
            var changed = web
            changed.data = ["other": "data"]
            try changed.updateInSecureStore()
            check(web.readFromSecureStore())
            #expect(web.readFromSecureStore()?.data?["other"] as? String == "data")

        case .internetAttributesApplied:
            let seen = Collector<[String: Any]>()
            struct Inspected: CreateableSecureStorable, InternetPasswordSecureStorable {
                let account = testAccount, server = "server", port = 8080
                let internetProtocol = LocksmithInternetProtocol.https, authenticationType = LocksmithInternetAuthenticationType.htmlForm
                let path: String? = "some_path", securityDomain: String? = "secdomain"
                var data: [String: Any] { ["some": "data"] }
                let sink: Collector<[String: Any]>
                var performCreateRequestClosure: PerformRequestClosureType {
                    { request, _ in
                        sink.add(request.dictionary); return errSecSuccess
                    }
                }
            }
            try Inspected(sink: seen).createInSecureStore()
            let d = try #require(seen.all.first)
            #expect(d["acct"] as? String == testAccount && d["ptcl"] as? String == "htps" && d["atyp"] as? String == "form")
            #expect(d["path"] as? String == "some_path" && d["sdmn"] as? String == "secdomain" && d["srvr"] as? String == "server")
            #expect(d["class"] as? String == "inet" && d["port"] as? Int == 8080 && d["v_Data"] is Data)

        case .genericOptionalAttributesApplied:
            let seen = Collector<[String: Any]>()
            struct Inspected: CreateableSecureStorable, GenericPasswordSecureStorable {
                let account = testAccount, service = testService
                let accessGroup: String? = "AppID.group"
                let accessible: LocksmithAccessibleOption? = .always
                let description: String? = "description", comment: String? = "comment"
                let creator: UInt? = 5, type: UInt? = 10
                let isInvisible: Bool? = false, isNegative: Bool? = false
                let generic: Data? = Data("not NSData".utf8)  // not the protocol's NSData?: ignored, as in Locksmith
                var data: [String: Any] { ["some": "data"] }
                let sink: Collector<[String: Any]>
                var performCreateRequestClosure: PerformRequestClosureType {
                    { request, _ in
                        sink.add(request.dictionary); return errSecSuccess
                    }
                }
            }
            try Inspected(sink: seen).createInSecureStore()
            let d = try #require(seen.all.first)
            #expect(d["acct"] as? String == testAccount && d["svce"] as? String == testService && d["agrp"] as? String == "AppID.group")
            #expect(d["desc"] as? String == "description" && d["icmt"] as? String == "comment" && d["pdmn"] as? String == "dk")
            #expect(d["class"] as? String == "genp" && d["crtr"] as? UInt == 5 && d["type"] as? UInt == 10)
            #expect(d["invi"] as? Bool == false && d["nega"] as? Bool == false && d["gena"] == nil)
        }
    }
}

@Suite("Locksmith on the vault: its own test cases")
struct LocksmithOnVault {
    @Test(arguments: LocksmithBehaviour.allCases)
    func behaviour(_ behaviour: LocksmithBehaviour) throws {
        try behaviour.run(TestStore(.vault))
    }
}

@Suite(
    "Locksmith on the Secret Service: its own test cases",
    .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
struct LocksmithOnSecretService {
    @Test(arguments: LocksmithBehaviour.allCases)
    func behaviour(_ behaviour: LocksmithBehaviour) throws {
        try behaviour.run(TestStore(.secretService))
    }
}
