import Foundation
import KeychainCore
import KeychainTestSupport
import Locksmith
import Testing

/// What a Locksmith call promises (every failure thrown, every attribute kept, the real result
/// through generic code), including where the original broke it; and its payload format.
@Suite("Locksmith: every failure thrown, every attribute kept; payloads in Apple's keyed-archive format")
struct LocksmithGuaranteesTests {
    let testStore: TestStore
    init() throws { testStore = try TestStore(.vault, passphrase: "locksmith-tests") }

    func scene<R>(_ body: () throws -> R) rethrows -> R { try DefaultStore.withStore(testStore.store, body) }

    func stored(_ itemClass: ItemClass) throws -> [Item] {
        do { return try testStore.store.copyMatching(Query(itemClass)) } catch .itemNotFound { return [] }
    }

    @Test("every failure is thrown: a locked vault, and a status Locksmith had no case for (its #159 silent success)")
    func failuresAreThrown() throws {
        scene {
            struct Denied: CreateableSecureStorable, DeleteableSecureStorable, GenericPasswordSecureStorable {
                let account = "a", service = "s"
                var data: [String: Any] { ["k": "v"] }
                var performCreateRequestClosure: PerformRequestClosureType { { _, _ in -34018 } }  // errSecMissingEntitlement
                var performDeleteRequestClosure: PerformRequestClosureType { { _, _ in -34018 } }
            }
            #expect(throws: LocksmithError.undefined) { try Denied().createInSecureStore() }
            #expect(throws: LocksmithError.undefined) { try Denied().deleteFromSecureStore() }
            testStore.vault!.lock()
            #expect(throws: LocksmithError.interactionNotAllowed) { try Locksmith.saveData(data: ["k": "v"], forUserAccount: "a", inService: "s") }
            #expect(throws: LocksmithError.interactionNotAllowed) { try Locksmith.updateData(data: ["k": "v"], forUserAccount: "a", inService: "s") }
        }
    }

    @Test("internet passwords keep their accessibility and access group (Locksmith dropped both)")
    func internetPasswordAttributes() throws {
        try scene {
            try WebPassword(accessible: .afterFirstUnlock, accessGroup: "AppID.web").createInSecureStore()
            let item = try #require(stored(.internetPassword).first)
            #expect(item.attributes.accessibility == .afterFirstUnlock && item.attributes.accessGroup == "AppID.web")
            testStore.vault!.lock()
            #expect(
                WebPassword(accessGroup: "AppID.web").readFromSecureStore()?.data?["some"] as? String == "data",
                "afterFirstUnlock, as asked, survives the lock")
            let result = try #require(WebPassword(accessGroup: "AppID.web").readFromSecureStore())
            #expect(result.accessible == .afterFirstUnlock && result.accessGroup == "AppID.web")
        }
    }

    @Test("updateInSecureStore changes an existing item's accessibility (Locksmith threw duplicate, its #73)")
    func accessibilityChanges() throws {
        try scene {
            try MetaGenericPassword(accessible: .whenUnlocked).createInSecureStore()
            try MetaGenericPassword(accessible: .afterFirstUnlock).updateInSecureStore()
            let items = try stored(.genericPassword)
            #expect(items.count == 1 && items[0].attributes.accessibility == .afterFirstUnlock)
        }
    }

    @Test("reading through generic code returns the real result (Locksmith's static dispatch gave nil)")
    func genericRead() throws {
        func read<T: ReadableSecureStorable>(_ value: T) -> SecureStorableResultType? { value.readFromSecureStore() }
        try scene {
            try AllThree().createInSecureStore()
            let result = try #require(read(ReadableGenericPassword()))
            #expect((result as? GenericPasswordSecureStorableResultType)?.service == testService)
            #expect(result.data?["one"] as? String == "two")
            try WebPassword().createInSecureStore()
            #expect((read(WebPassword()) as? InternetPasswordSecureStorableResultType)?.port == 8080)
        }
    }

    @Test("a payload value that cannot be archived is a thrown error, never a crash, and nothing is stored")
    func unarchivable() throws {
        struct NotCodable {}
        try scene {
            #expect(throws: LocksmithError.param) { try Locksmith.saveData(data: ["bad": NotCodable()], forUserAccount: "a", inService: "s") }
            #expect(throws: LocksmithError.param) { try Locksmith.saveData(data: ["nested": ["x": [NotCodable()]]], forUserAccount: "a", inService: "s") }
            #expect(try stored(.genericPassword).isEmpty)
            try Locksmith.saveData(
                data: ["ok": ["list": [1, 2.5, "three"], "when": Date(timeIntervalSince1970: 0), "bytes": Data([1])]],
                forUserAccount: "a", inService: "s")
        }
    }

    @Test("a keyed archive in Apple's format (Fixtures/apple-keyed-archive.bplist) decodes to the same dictionary")
    func appleArchive() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/apple-keyed-archive.bplist")
        let bytes = try Data(contentsOf: fixture)
        try scene {
            try testStore.store.add(Item(.genericPassword, attributes: Attributes(service: "apple", account: "user"), value: SecretBytes(bytes)))
            let data = try #require(Locksmith.loadDataForUserAccount(userAccount: "user", inService: "apple"))
            #expect(data.count == 8)
            #expect(data["password"] as? String == "my_password")
            #expect(data["pin"] as? Int == 1234 && data["score"] as? Double == 2.5 && data["admin"] as? Bool == true)
            #expect(data["created"] as? Date == Date(timeIntervalSinceReferenceDate: 600_000_000))
            #expect(data["token"] as? Data == Data([0xde, 0xad, 0xbe, 0xef]))
            #expect(data["tags"] as? [String] == ["a", "b"])
            #expect((data["profile"] as? [String: Any])?["name"] as? String == "Lone Starr")
        }
    }

    @Test("what we write is a keyed archive: bplist00 with NSKeyedArchiver's header, and garbage reads as no data")
    func ourArchive() throws {
        try scene {
            try Locksmith.saveData(data: ["password": "my_password"], forUserAccount: "user", inService: "ours")
            let value = try #require(testStore.store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "ours"), returnData: true)).first?.value)
            #expect(value.data.prefix(8) == Data("bplist00".utf8))
            let plist = try PropertyListSerialization.propertyList(from: value.data, format: nil) as? [String: Any]
            #expect(plist?["$archiver"] as? String == "NSKeyedArchiver" && plist?["$version"] as? Int == 100000)
            try testStore.store.add(Item(.genericPassword, attributes: Attributes(service: "garbage", account: "user"), value: SecretBytes(Data("not an archive".utf8))))
            #expect(Locksmith.loadDataForUserAccount(userAccount: "user", inService: "garbage") == nil)
        }
    }
}
