import FoundationEssentials
import KeychainCore
import KeychainTestSupport
import Testing

@testable import KeychainServe

/// `Collection.Delete` and `Service.Lock` ask a collection where it is kept
/// (``SecretCollection/isKeptInVault``), never which type it is: a collection kept in the vault
/// some other way (its own file, a scope of its own) is deleted and locked as the vault's.
@Suite("keychain serve's Delete and Lock go by where a collection is kept")
struct CollectionKeepingTests {
    let directory = TemporaryDirectory()

    /// A collection of another kind that says it is kept in the vault: its items in memory,
    /// its deletion recorded.
    final class KeptElsewhere: SecretCollection {
        let items = MemoryCollection(name: "elsewhere", label: "Elsewhere")
        var deleted = false
        var name: String { items.name }
        var isKeptInVault: Bool { true }
        var isLocked: Bool { items.isLocked }
        func label() throws(ServiceError) -> String { items.label() }
        func setLabel(_ label: String) throws(ServiceError) { items.setLabel(label) }
        func dates() throws(ServiceError) -> (created: UInt64, modified: UInt64) { items.dates() }
        func itemIDs() throws(ServiceError) -> [String] { items.itemIDs() }
        func search(_ attributes: [String: String]) throws(ServiceError) -> [String] { items.search(attributes) }
        func record(_ id: String) throws(ServiceError) -> SecretItemRecord { try items.record(id) }
        func secret(_ id: String) throws(ServiceError) -> SecretBytes { try items.secret(id) }
        func create(_ record: SecretItemRecord, secret: SecretBytes, replace: Bool) throws(ServiceError) -> (id: String, replaced: Bool) {
            try items.create(record, secret: secret, replace: replace)
        }
        func update(_ id: String, label: String?, attributes: [String: String]?, secret: SecretBytes?, contentType: String?) throws(ServiceError) {
            try items.update(id, label: label, attributes: attributes, secret: secret, contentType: contentType)
        }
        func delete(_ id: String) throws(ServiceError) { try items.delete(id) }
        func deleteCollection() throws(ServiceError) { deleted = true }
    }

    private func daemon(_ vault: Vault, _ elsewhere: KeptElsewhere) -> SecretServiceDaemon {
        SecretServiceDaemon(
            bus: nil, vault: vault,
            collections: [VaultCollection(name: "login", label: "Login", store: vault), MemoryCollection(name: "session", label: "Session"), elsewhere],
            defaultCollection: "login")
    }

    private func call(_ daemon: SecretServiceDaemon, _ path: String, _ interface: String, _ member: String, _ signature: String, _ arguments: [BusValue])
        throws(ServiceError) -> [BusValue]
    {
        try daemon.respond(
            to: IncomingCall(
                path: path, interface: interface, member: member, signature: signature, sender: ":1.7", arguments: { () throws(ServiceError) in arguments })
        ).0
    }

    @Test("Delete removes a collection kept in the vault whatever its type; the session's and login are refused")
    func deleteAsksWhereTheCollectionIsKept() throws {
        let vault = try Vault(directory.vaultConfiguration())
        let elsewhere = KeptElsewhere()
        let daemon = daemon(vault, elsewhere)
        let path = ObjectPath.collectionPath(elsewhere.name)
        #expect(try call(daemon, path, CollectionInterface.name, "Delete", "", []).first?.objectPath == ObjectPath.none)
        #expect(elsewhere.deleted)
        #expect(!daemon.collections.contains(elsewhere.name))
        for kept in ["session", "login"] {
            #expect(throws: ServiceError.self) { try call(daemon, ObjectPath.collectionPath(kept), CollectionInterface.name, "Delete", "", []) }
            #expect(daemon.collections.contains(kept))
        }
    }

    @Test("Lock names a collection kept in the vault whatever its type, and never the session's")
    func lockAsksWhereTheCollectionIsKept() throws {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.changePassphrase(from: nil, to: SecretBytes(utf8: "passphrase"))
        let elsewhere = KeptElsewhere()
        let daemon = daemon(vault, elsewhere)
        let paths = [ObjectPath.collectionPath(elsewhere.name), ObjectPath.collectionPath("session")]
        let reply = try call(daemon, ObjectPath.root, ServiceInterface.name, "Lock", "ao", [.paths(paths)])
        #expect(reply.first?.pathList == [ObjectPath.collectionPath(elsewhere.name)])
        #expect(!vault.isAvailable(.whenUnlocked))
    }
}
