import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// `keychain serve`'s synchronized collection on one machine (its travels: Tests/SyncTests,
/// ServedCollectionSyncTests).
@Suite("keychain serve's sync collection", .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct SyncCollectionTests {
    @Test("the sync collection is served without a sync group, keeps synchronizable rows, and refuses Delete")
    func servedAlwaysAndKept() throws {
        let served = try ServedVault()
        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=Shared", "--collection=sync", "service", "shared"], input: "everywhere")
        #expect(stored.status == 0, "\(stored.stderr) \(served.serveErrors)")
        #expect(try label(of: "sync", served) == "Synchronized")
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "shared"]).output == "everywhere")

        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath), usesKernelKeyring: false, syncsInBackground: false))
        let rows = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "sync", accessGroup: "org.freedesktop.secrets.secret"), returnData: true))
        #expect(rows.count == 1)
        #expect(rows.first?.attributes.synchronizable == true)
        #expect(rows.first?.attributes.accessibility == .whenUnlocked)
        #expect(rows.first?.value == SecretBytes(utf8: "everywhere"))

        let deleted = try served.run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets/collection/sync", "org.freedesktop.Secret.Collection.Delete"])
        #expect(deleted.status != 0)
        #expect(deleted.stderr.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(deleted.stderr)")
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "shared"]).output == "everywhere")
    }

    @Test("a collection created before under the name sync keeps that name and its label; the synchronized one is sync_1, which the sync alias names")
    func createdSyncCollectionKeepsItsName() throws {
        let served = try ServedVault(serving: false)
        try FileManager.default.createDirectory(atPath: served.directory.path + "/data/keychain", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath), usesKernelKeyring: false, syncsInBackground: false))
        // The row CreateCollection wrote for a collection labelled "Sync" before there was a synchronized one.
        var row = Attributes(service: "collections", account: "sync", accessGroup: "org.freedesktop.secrets.collection", synchronizable: false)
        row.label = "Sync"
        row.accessibility = .afterFirstUnlock
        try vault.add(Item(.genericPassword, attributes: row, value: SecretBytes(count: 0) { _ in }))
        try served.startServing()
        #expect(served.waitForProvider(), "\(served.serveErrors)")

        #expect(try label(of: "sync", served) == "Sync")
        #expect(try label(of: "sync_1", served) == "Synchronized")
        let alias = try served.run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias", "string:sync"])
        #expect(alias.output.contains("object path \"/org/freedesktop/secrets/collection/sync_1\""), "\(alias.output)\(alias.stderr)")
    }

    /// The `Label` of a collection, read with dbus-send.
    private func label(of collection: String, _ served: ServedVault) throws -> String? {
        let result = try served.run(
            "/usr/bin/dbus-send", SecretServiceProperty.get("Label", of: "org.freedesktop.Secret.Collection", at: "/org/freedesktop/secrets/collection/\(collection)"))
        return result.status == 0 ? SecretServiceProperty.string(in: result.output) : nil
    }
}
