import Foundation
import KeychainCore
import KeychainTestSupport
import Locksmith
import Testing
import UICKeyChainStore
import Valet

/// Items of other programs, as a desktop's collection holds them: what `secret-tool` (and
/// NetworkManager, Chrome, gh, Python keyring) store, none with this library's schema.
struct ForeignItem: Sendable {
    let label: String
    let attributes: [(String, String)]
    let secret: String

    static func all(run: String) -> [ForeignItem] {
        [
            ForeignItem(
                label: "Network secret for Cafe Wi-Fi",
                attributes: [
                    ("xdg:schema", "org.freedesktop.NetworkManager.Connection"), ("connection-uuid", "3f9c"),
                    ("setting-name", "802-11-wireless-security"), ("setting-key", "psk"),
                ], secret: "wifi-psk"),
            ForeignItem(
                label: "Chrome Safe Storage",
                attributes: [
                    ("xdg:schema", "chrome_libsecret_os_crypt_password_v2"), ("application", "chrome"),
                ], secret: "chrome-key"),
            ForeignItem(label: "gh:github.com", attributes: [("service", "gh:github.com"), ("username", "alice")], secret: "gho_token"),
            ForeignItem(
                label: "Password for 'bob' on 'github.com'",
                attributes: [
                    ("xdg:schema", "org.freedesktop.Secret.Generic"), ("application", "Python keyring library"),
                    ("service", "github.com"), ("username", "bob"), ("account", "bob"),
                ], secret: "py-secret"),
            ForeignItem(
                label: "other-app token", attributes: [("xdg:schema", "org.example.OtherApp"), ("application", "other-app"), ("service", "svc"), ("account", "acc")],
                secret: "other-secret"),
        ].map { ForeignItem(label: $0.label, attributes: $0.attributes + [("test-run", run)], secret: $0.secret) }
    }
}

/// The Secret Service store, the faces and the command never read, change or delete another
/// program's item unless asked to, and an update keeps what an item carries.
///
/// These use stores without a partition, as applications do, so they run only against a
/// private Secret Service (scripts/secret-service.sh exports SECRET_SERVICE_DIR), never a
/// desktop's: a regression here would delete real secrets.
@Suite(
    "Other programs' Secret Service items are not ours", .serialized,
    .enabled(
        if: SecretServiceEnvironment.isAvailable && ProcessInfo.processInfo.environment["SECRET_SERVICE_DIR"] != nil,
        "needs the private Secret Service of scripts/secret-service.sh (\(SecretServiceEnvironment.unavailableReason ?? "SECRET_SERVICE_DIR is not set"))"))
final class ForeignItemsTests {
    let run = UUID().uuidString
    let environment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = "/usr/bin:/bin"
        return environment
    }()
    let directory = TemporaryDirectory()

    init() throws {
        for item in ForeignItem.all(run: run) {
            let stored = try Subprocess.run(
                "/usr/bin/secret-tool", ["store", "--label", item.label] + item.attributes.flatMap { [$0.0, $0.1] },
                environment: environment, input: Data(item.secret.utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
        }
    }

    deinit {
        _ = try? Subprocess.run("/usr/bin/secret-tool", ["clear", "test-run", run], environment: environment)
        // Our own items the tests made without a partition.
        _ = try? SecretServiceStore().delete(Query())
    }

    /// The planted items still there, with their secrets, by label.
    func survivors() throws -> [String: String] {
        var found: [String: String] = [:]
        for item in ForeignItem.all(run: run) {
            let lookup = try Subprocess.run("/usr/bin/secret-tool", ["lookup"] + item.attributes.flatMap { [$0.0, $0.1] }, environment: environment)
            if lookup.status == 0 { found[item.label] = lookup.output }
        }
        return found
    }

    func expectAllSurvive(_ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let left = try survivors()
        for item in ForeignItem.all(run: run) {
            #expect(left[item.label] == item.secret, "\(context): '\(item.label)' was changed or deleted", sourceLocation: sourceLocation)
        }
    }

    @Test("KeychainCore's queries neither see nor delete other programs' items")
    func coreQueries() throws {
        let store = try SecretServiceStore()
        try store.add(Item(.genericPassword, attributes: Attributes(service: "ours", account: "me"), value: SecretBytes(utf8: "mine")))
        let seen = try store.copyMatching(Query())
        #expect(seen.map(\.attributes.service) == ["ours"], "only our item is listed")
        #expect(throws: StoreError.itemNotFound) { try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "github.com"))) }
        #expect(try store.delete(Query(.genericPassword)) == 1, "only our item is deleted")
        #expect(try store.delete(Query()) == 0)
        try expectAllSurvive("delete(Query(.genericPassword))")
    }

    @Test("Valet's migration by a class-only query moves and deletes none of them")
    func valetMigration() throws {
        let store = try SecretServiceStore()
        try ValetStore.withStore(store) { () throws in
            let valet = Valet.valet(with: Identifier(nonEmpty: "Druidia")!, accessibility: .whenUnlocked)
            #expect(throws: KeychainError.itemNotFound) {
                try valet.migrateObjects(matching: [kSecClass as String: kSecClassGenericPassword], removeOnCompletion: true)
            }
            #expect(try valet.allKeys().isEmpty)
        }
        try expectAllSurvive("Valet.migrateObjects(matching: [kSecClass as String: kSecClassGenericPassword], removeOnCompletion: true)")
    }

    @Test("UICKeyChainStore's removeAllItems and Locksmith's delete leave them alone")
    func uicKeyChainStoreAndLocksmith() throws {
        let store = try SecretServiceStore()
        try DefaultStore.withStore(store) { () throws in
            let keychain = UICKeyChainStore(service: "github.com")
            #expect(keychain.string(forKey: "bob") == nil)
            try keychain.removeAllItemsWithError()
            #expect(throws: LocksmithError.notFound) { try Locksmith.deleteDataForUserAccount(userAccount: "bob", inService: "github.com") }
            #expect(Locksmith.loadDataForUserAccount(userAccount: "acc", inService: "svc") == nil)
        }
        try expectAllSurvive("UICKeyChainStore.removeAllItems / Locksmith.deleteData")
    }

    @Test("read-only: a migration source is found, but a write that would change it changes nothing")
    func readOnly() throws {
        let store = try SecretServiceStore(.init(foreignItems: .readOnly))
        let found = try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "svc", account: "acc"), returnData: true))
        #expect(found.first?.value?.string == "other-secret")
        #expect(throws: StoreError.self) { try store.delete(Query(.genericPassword, attributes: Attributes(service: "svc"))) }
        #expect(throws: StoreError.self) { try store.update(Query(.genericPassword, attributes: Attributes(service: "svc")), attributes: Attributes(comment: "x"), value: nil) }
        #expect(throws: StoreError.self) { try store.upsert(Item(.genericPassword, attributes: Attributes(service: "svc", account: "acc"), value: SecretBytes(utf8: "x"))) }
        try expectAllSurvive("read-only writes")
    }

    @Test("an update, where allowed, keeps the item's schema and every attribute we do not know; its owner still finds it")
    func updateMerges() throws {
        let store = try SecretServiceStore(.init(foreignItems: .readWrite))
        try store.update(
            Query(.genericPassword, attributes: Attributes(service: "svc", account: "acc")), attributes: Attributes(comment: "noted"),
            value: SecretBytes(utf8: "rotated"))
        let owner = try Subprocess.run(
            "/usr/bin/secret-tool", ["lookup", "application", "other-app", "service", "svc", "account", "acc", "test-run", run],
            environment: environment)
        #expect(owner.status == 0 && owner.output == "rotated", "the owner finds its item by its own attributes")
        // secret-tool prints the label and secret on standard output, the attributes on standard error.
        let search = try Subprocess.run("/usr/bin/secret-tool", ["search", "--all", "application", "other-app", "test-run", run], environment: environment)
        let shown = search.output + search.stderr
        #expect(shown.contains("attribute.application = other-app") && shown.contains("attribute.comment = noted"), "\(shown)")
        #expect(shown.contains("schema = org.example.OtherApp") && !shown.contains("org.swift-keychain.Item"), "its schema was kept, ours not stamped on it: \(shown)")
        #expect(shown.contains("label = other-app token"), "its label was kept")
    }

    @Test("the command addresses other programs' items only with --foreign")
    func command() throws {
        var environment = ["DBUS_SESSION_BUS_ADDRESS": self.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""]
        environment["KEYCHAIN_BACKEND"] = "secret-service"
        func keychain(_ arguments: [String]) throws -> CommandResult {
            try KeychainExecutable.run(arguments, environment: environment, home: directory.path)
        }
        #expect(try keychain(["get", "--service", "svc", "acc"]).status == 1)
        #expect(try keychain(["remove", "--service", "svc", "acc"]).status == 1)
        let list = try keychain(["list"])
        #expect(list.status == 0 && !list.output.contains("svc") && !list.output.contains("github.com"), "\(list.output)")
        try expectAllSurvive("keychain get/remove/list without --foreign")
        let read = try keychain(["get", "--foreign", "--service", "svc", "acc"])
        #expect(read.status == 0 && read.output == "other-secret\n", "\(read.stderr)")
        #expect(
            try keychain(["get", "--foreign", "--vault", directory.vaultPath(), "--backend", "vault", "--service", "svc", "acc"]).status == 2,
            "--foreign means nothing for a vault")
    }

    @Test("a value over the store's limit that another program stored is refused when read, not copied")
    func oversizedReadIsRefused() throws {
        // secret-tool stores at most 8 KiB from standard input: a 4 KiB limit shows the check.
        let big = String(repeating: "x", count: 6_000)
        let stored = try Subprocess.run(
            "/usr/bin/secret-tool", ["store", "--label", "huge", "service", "huge", "account", "a", "test-run", run],
            environment: environment, input: Data(big.utf8))
        #expect(stored.status == 0)
        let store = try SecretServiceStore(.init(maximumValueSize: 4_096, foreignItems: .readOnly))
        #expect(throws: StoreError.valueTooLarge(limit: 4_096)) {
            try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "huge"), returnData: true))
        }
        #expect(try store.contains(Query(.genericPassword, attributes: Attributes(service: "huge"))), "finding it reads no value")
    }
}
