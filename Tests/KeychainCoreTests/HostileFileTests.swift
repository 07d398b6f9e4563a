import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The vault holds when its file or a neighbour is hostile: moved, emptied, linked, owned by
/// someone else, or edited with `sqlite3` (vault-format issue, findings 1 to 3).
@Suite("Hostile files: reads create nothing, keys are never replaced, only our schema runs")
struct HostileFileTests {
    let directory = TemporaryDirectory()

    func item(_ account: String, _ value: String = "token") -> Item {
        Item(.genericPassword, attributes: Attributes(service: "s", account: account), value: SecretBytes(utf8: value))
    }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    /// Runs SQL on a vault file as an attacker with `sqlite3` would.
    func edit(_ path: String, _ sql: String) throws {
        try RawVault(path).connection.execute(sql)
    }

    @Test("reads of a missing vault find nothing and create nothing, in the library and the command")
    func readsCreateNothing() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        #expect(throws: StoreError.itemNotFound) { try vault.copyMatching(Query(.genericPassword)) }
        #expect(try !vault.contains(Query(.genericPassword)))
        #expect(try vault.delete(Query()) == 0)
        #expect(!vault.status().exists && vault.status().itemCount == 0)
        #expect(throws: StoreError.noVault(path: configuration.location.path)) { try vault.unlock(passphrase: SecretBytes(utf8: "x")) }
        #expect(!FileManager.default.fileExists(atPath: configuration.location.path))
        #expect(!FileManager.default.fileExists(atPath: configuration.location.keyFilePath))

        let path = directory.path + "/cli/default.keychain"
        #expect(try keychain(["get", "--vault", path, "--service", "s", "a"]).status == 1)
        #expect(try keychain(["contains", "--vault", path, "--service", "s", "a"]).status == 1)
        #expect(try keychain(["list", "--vault", path]).status == 0)
        let status = try keychain(["status", "--vault", path])
        #expect(status.status == 0 && status.output.contains("no vault: the directory \(directory.path)/cli does not exist"), "\(status.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/cli"), "nothing was created, not even the directory")
        // The first write creates it.
        try vault.add(item("a"))
        #expect(try vault.copyMatching(Query(.genericPassword, returnData: true)).first?.value?.string == "token")
    }

    @Test(
        "a vault moved aside or emptied is never replaced: every call says what happened, the key file survives, and putting the vault back restores everything",
        arguments: ["moved", "emptied"])
    func movedVaultKeepsItsKey(_ how: String) throws {
        let configuration = directory.vaultConfiguration()
        try Vault(configuration).add(item("a", "the-token"))
        let path = configuration.location.path, aside = path + ".aside"
        let key = try Data(contentsOf: URL(fileURLWithPath: configuration.location.keyFilePath))
        try FileManager.default.copyItem(atPath: path, toPath: aside)
        if how == "moved" { try FileManager.default.removeItem(atPath: path) } else { truncate(path, 0) }

        let orphaned = StoreError.orphanedKeyFile(vault: path, keyFile: configuration.location.keyFilePath)
        #expect(throws: orphaned) { try Vault(configuration).copyMatching(Query(.genericPassword)) }
        #expect(throws: orphaned) { try Vault(configuration).add(self.item("b")) }
        for arguments in [["get", "--service", "s", "a"], ["list"], ["status"]] {
            let result = try keychain([arguments[0], "--vault", path] + arguments.dropFirst())
            #expect(result.status == 4 && result.stderr.contains("key file") && result.stderr.contains(path), "\(arguments): \(result.stderr)")
        }
        let set = try keychain(["set", "--vault", path, "--service", "s", "b"], input: "new")
        #expect(set.status == 4, "\(set.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: configuration.location.keyFilePath)) == key, "the key file is untouched")

        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: aside, toPath: path)
        #expect(try Vault(configuration).copyMatching(Query(.genericPassword, attributes: Attributes(account: "a"), returnData: true)).first?.value?.string == "the-token")
    }

    /// Every file of `directory` but SQLite's shared-memory index (its read marks move with every
    /// read, as a lock would), with its size, modification time and bytes; and the directory's time.
    func snapshot(_ directory: String) throws -> [String] {
        var stamp = stat()
        stat(directory, &stamp)
        var entries = ["directory \(stamp.st_mtim.tv_sec).\(stamp.st_mtim.tv_nsec)"]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() {
            stat(directory + "/" + name, &stamp)
            let bytes = name.hasSuffix("-shm") ? Data() : (FileManager.default.contents(atPath: directory + "/" + name) ?? Data())
            entries.append(name.hasSuffix("-shm") ? name : "\(name) \(stamp.st_size) \(stamp.st_mtim.tv_sec).\(stamp.st_mtim.tv_nsec) \(bytes.hashValue)")
        }
        return entries
    }

    @Test("reads of an existing vault leave every file and the directory as they were, in the library and the command")
    func readsWriteNothing() throws {
        let configuration = directory.vaultConfiguration(name: "reads/v.keychain")
        try FileManager.default.createDirectory(atPath: directory.path + "/reads", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Vault(configuration).add(item("a", "the-token"))
        let before = try snapshot(directory.path + "/reads")
        #expect(before.contains { $0.hasPrefix("v.keychain-wal ") }, "the WAL stays beside the vault: \(before)")
        usleep(20_000)
        let vault = try Vault(configuration)
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "a"), returnData: true)).first?.value?.string == "the-token")
        #expect(try vault.contains(Query(.genericPassword)) && vault.verify().isSound && vault.status().itemCount == 1)
        let path = configuration.location.path
        for arguments in [["get", "--service", "s", "a"], ["contains", "--service", "s", "a"], ["list"], ["status"], ["verify"]] {
            let result = try keychain(arguments + ["--vault", path])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        #expect(try snapshot(directory.path + "/reads") == before)
    }

    @Test("eight processes creating one vault at once: one vault, one key, every write kept")
    func racingCreators() throws {
        let path = directory.path + "/race/v.keychain"
        mkdir(directory.path + "/race", 0o700)
        let results = Collector<Int32>()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let result = try? KeychainExecutable.run(["set", "--vault", path, "--service", "s", "k\(index)"], input: Data("v\(index)".utf8), home: directory.path)
            results.add(result?.status ?? -1)
        }
        #expect(results.all == Array(repeating: 0, count: 8))
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false))
        #expect(try vault.copyMatching(Query(.genericPassword)).count == 8)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/race").filter { $0.contains(".new-") }
        #expect(leftovers.isEmpty, "no temporary file left: \(leftovers)")
    }

    @Test("a key file is never written over: removing a passphrase where an old key file lies refuses")
    func keyFileNeverReplaced() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        try vault.add(item("a"))
        try vault.changePassphrase(from: nil, to: SecretBytes(utf8: "pw"))
        #expect(!FileManager.default.fileExists(atPath: configuration.location.keyFilePath), "the old key file is gone")
        let planted = Data(repeating: 7, count: 32)
        #expect(FileManager.default.createFile(atPath: configuration.location.keyFilePath, contents: planted, attributes: [.posixPermissions: 0o600]))
        #expect(throws: StoreError.self) { try vault.changePassphrase(from: SecretBytes(utf8: "pw"), to: nil) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: configuration.location.keyFilePath)) == planted)
        #expect(vault.hasPassphrase, "the passphrase stays")
    }

    @Test("symbolic links are never followed: not the vault, not the key file")
    func symlinksRefused() throws {
        let configuration = directory.vaultConfiguration()
        try Vault(configuration).add(item("a"))
        let real = directory.path + "/real.keychain"
        try FileManager.default.moveItem(atPath: configuration.location.path, toPath: real)
        try FileManager.default.createSymbolicLink(atPath: configuration.location.path, withDestinationPath: real)
        #expect(throws: StoreError.untrusted(path: configuration.location.path, reason: "it is a symbolic link; the vault's files are never followed through links")) {
            try Vault(configuration).copyMatching(Query())
        }
        try FileManager.default.removeItem(atPath: configuration.location.path)
        try FileManager.default.moveItem(atPath: real, toPath: configuration.location.path)

        let realKey = directory.path + "/real.key"
        try FileManager.default.moveItem(atPath: configuration.location.keyFilePath, toPath: realKey)
        try FileManager.default.createSymbolicLink(atPath: configuration.location.keyFilePath, withDestinationPath: realKey)
        #expect(throws: StoreError.self) { try Vault(configuration).copyMatching(Query(.genericPassword, returnData: true)) }
    }

    @Test("a directory others may write is refused, with the reason")
    func openDirectoryRefused() throws {
        let open = directory.path + "/shared"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        chmod(open, 0o777)
        var configuration = directory.vaultConfiguration()
        configuration.location = VaultLocation(path: open + "/v.keychain")
        #expect(throws: StoreError.self) { try Vault(configuration).add(self.item("a")) }
        let result = try keychain(["set", "--vault", open + "/v.keychain", "--service", "s", "a"], input: "v")
        #expect(result.status == 4 && result.stderr.contains("other users may write in it"), "\(result.stderr)")
    }

    @Test(
        "files of another user are refused, even by root",
        .enabled(if: geteuid() == 0, "needs root, to give the vault to another user"))
    func foreignOwnerRefused() throws {
        let configuration = directory.vaultConfiguration()
        try Vault(configuration).add(item("a"))
        chown(configuration.location.path, 65534, 65534)
        #expect(throws: StoreError.self) { try Vault(configuration).add(self.item("b")) }
        let result = try keychain(["set", "--vault", configuration.location.path, "--service", "s", "b"], input: "secret")
        #expect(result.status == 4 && result.stderr.contains("belongs to uid 65534"), "\(result.stderr)")
    }

    @Test(
        "a planted trigger, view or extra table is refused before anything runs",
        arguments: [
            "CREATE TRIGGER keep BEFORE UPDATE ON items BEGIN SELECT RAISE(IGNORE); END",
            "CREATE TRIGGER stay BEFORE DELETE ON items BEGIN SELECT RAISE(IGNORE); END",
            "CREATE TABLE loot(x BLOB); CREATE TRIGGER copy AFTER INSERT ON items BEGIN INSERT INTO loot VALUES(new.value); END",
            "CREATE VIEW everything AS SELECT * FROM items",
            "CREATE INDEX extra ON items(value)",
            "ALTER TABLE items ADD COLUMN spare BLOB",
        ])
    func plantedSchemaRefused(_ sql: String) throws {
        let configuration = directory.vaultConfiguration()
        try Vault(configuration).add(item("a", "old-token"))
        try edit(configuration.location.path, sql)
        #expect(throws: StoreError.self) { try Vault(configuration).upsert(self.item("a", "new-token")) }
        let result = try keychain(["set", "--vault", configuration.location.path, "--service", "s", "a"], input: "new-token")
        #expect(result.status == 4 && result.stderr.contains("not part of a vault's schema"), "\(result.stderr)")
    }

    @Test("one damaged row never stops reads of the others; alone, it is reported as damaged", arguments: ["attributes", "value", "protection"])
    func damagedRowIsolated(_ column: String) throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        for account in ["a", "b", "c"] { try vault.add(item(account, "value-" + account)) }
        let raw = try RawVault(configuration.location.path)
        let target = try raw.blobs("SELECT id, attributes FROM items ORDER BY id")[1]
        switch column {
        case "protection": try raw.connection.execute("UPDATE items SET protection = 99 WHERE id = \(target.0)")
        case "value":
            let value = try raw.blobs("SELECT id, value FROM items WHERE id = \(target.0)")[0].1
            try raw.set("UPDATE items SET value = ? WHERE id = ?", raw.flip(value, at: value.count - 1), target.0)
        default: try raw.set("UPDATE items SET attributes = ? WHERE id = ?", raw.flip(target.1, at: target.1.count - 1), target.0)
        }
        let reopened = try Vault(configuration)
        let listed = try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true))
        #expect(Set(listed.compactMap(\.attributes.account)) == ["a", "c"], "the undamaged items are listed")
        #expect(Set(listed.compactMap { $0.value?.string }) == ["value-a", "value-c"], "with their values")
        #expect(throws: StoreError.self) { try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "b"), returnData: true)) }
        let list = try keychain(["list", "--vault", configuration.location.path])
        #expect(list.status == 0 && list.output.contains("\ta\t") && list.output.contains("\tc\t"), "\(list.output) \(list.stderr)")
    }

    @Test("a recursive view in the items table's place ends at once, never runs")
    func recursiveViewRefused() throws {
        let configuration = directory.vaultConfiguration()
        try Vault(configuration).add(item("a"))
        try edit(
            configuration.location.path,
            """
            ALTER TABLE items RENAME TO old_items;
            CREATE VIEW items AS WITH RECURSIVE r(id, class, protection, identity, scope, attributes, value) AS
                (SELECT * FROM old_items UNION ALL SELECT id + 1, class, protection, identity, scope, attributes, value FROM r)
                SELECT * FROM r
            """)
        let start = Date()
        #expect(throws: StoreError.self) { try Vault(configuration).copyMatching(Query(.genericPassword, returnData: true)) }
        #expect(Date().timeIntervalSince(start) < 5)
    }
}

/// A damaged vault lets its owner see what is damaged and save what still opens.
@Suite("verify and recover")
struct VerifyRecoverTests {
    let directory = TemporaryDirectory()

    @Test("verify names the damaged rows (never their names) and recover copies every item that still opens into a new vault")
    func verifyAndRecover() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        for account in ["a", "b", "c"] {
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "secret-service-name", account: account), value: secret("value-" + account)))
        }
        #expect(try vault.verify().isSound && vault.verify().intact == 3)
        let raw = try RawVault(configuration.location.path)
        let target = try raw.blobs("SELECT id, value FROM items ORDER BY id")[1]
        try raw.set("UPDATE items SET value = ? WHERE id = ?", raw.flip(target.1, at: 3), target.0)
        let report = try Vault(configuration).verify()
        #expect(!report.isSound && report.intact == 2 && report.damaged.map(\.row) == [target.0])
        #expect(!report.damaged[0].reason.contains("secret-service-name") && !report.damaged[0].reason.contains("value-"))

        let command = try KeychainExecutable.run(["verify", "--vault", configuration.location.path], home: directory.path)
        #expect(command.status == 4 && command.output.contains("2 intact") && command.output.contains("row \(target.0)"), "\(command.output)")

        let rescued = directory.path + "/rescued.keychain"
        let (copied, left) = try Vault(configuration).recover(to: rescued, passphrase: nil)
        #expect(copied == 2 && left == 1)
        let saved = try Vault(VaultConfiguration(location: VaultLocation(path: rescued), usesKernelKeyring: false))
        #expect(Set(try saved.copyMatching(Query(.genericPassword, returnData: true)).compactMap { $0.value?.string }) == ["value-a", "value-c"])
        #expect(try saved.verify().isSound)
        #expect(throws: StoreError.self) { _ = try Vault(configuration).recover(to: rescued, passphrase: nil) }
    }
}

@Suite("A row moved into another scope is never handled as part of it")
struct ScopeEditTests {
    let directory = TemporaryDirectory()

    @Test(
        "an item whose scope digest was copied from another service is neither listed nor deleted with that service's items: the ledger's scope shards catch the move"
    )
    func movedRowNotPulledIn() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "A", account: "keep"), value: secret("a-secret")))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "B", account: "b"), value: secret("b-secret")))
        let raw = try RawVault(configuration.location.path)
        let scopes = try raw.blobs("SELECT id, scope FROM items ORDER BY id")
        try raw.set("UPDATE items SET scope = ? WHERE id = ?", scopes[1].1, scopes[0].0)
        let reopened = try Vault(configuration)
        expectTampered({ _ = try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(service: "B"))) }, "B's listing with the moved row")
        expectTampered({ _ = try reopened.delete(Query(.genericPassword, attributes: Attributes(service: "B"))) }, "B's clear with the moved row")
        // Read by its name (its own identity shard, which the move did not change).
        let kept = try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(service: "A", account: "keep"), limit: .one, returnData: true))
        #expect(kept.first?.value?.string == "a-secret", "A's item survived B's clear")
    }
}
