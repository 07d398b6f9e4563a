import Foundation
import KeychainTestSupport
import Synchronization
import Testing

@testable import KeychainCore

/// The vault's side of sync, without a cluster: what enters the outbox, how it is sealed, what
/// a received change may do, and that an enrolled vault's schema and journal are checked.
@Suite("The sync journal and outbox")
struct SyncJournalTests {
    let directory = TemporaryDirectory()

    /// A vault enrolled in a group whose cluster is nowhere (port 9 on loopback: nothing answers).
    func enrolledVault() throws -> Vault {
        let vault = try Vault(directory.vaultConfiguration())
        let keys = try X25519.generate()
        let state = SyncState(
            userID: Random.bytes(16), deviceID: Random.bytes(16), deviceName: "test", privateKey: keys.privateKey, publicKey: keys.publicKey,
            epochKeys: [1: SecretBytes.random(count: 32)], epoch: 1, cursor: 0, lastPull: 0, refused: 0,
            cluster: EtcdClient.Configuration(endpoints: ["http://127.0.0.1:9"]))
        try vault.withOpened(creating: true) { (open) throws(StoreError) in try open.enrollSync(device: state.deviceID, state: state.encoded()) }
        return vault
    }

    func outbox(_ vault: Vault) throws -> [SyncChange] {
        try vault.withOpened(creating: false) { (open) throws(StoreError) in try open.outbox(limit: 100).entries.map(\.change) }
    }

    func cloudItem(_ account: String, _ value: String, accessibility: Accessibility = .whenUnlocked) -> Item {
        Item(.genericPassword, attributes: Attributes(service: "svc", account: account, synchronizable: true, accessibility: accessibility), value: secret(value))
    }

    @Test("only synchronizable items that may leave the device enter the outbox: not local ones, not ThisDeviceOnly ones")
    func onlyTravellingItems() throws {
        let vault = try enrolledVault()
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "svc", account: "local"), value: secret("stays")))
        try vault.add(cloudItem("bound", "stays too", accessibility: .afterFirstUnlockThisDeviceOnly))
        try vault.add(cloudItem("travels", "goes"))
        let changes = try outbox(vault)
        #expect(changes.map(\.attributes.account) == ["travels"])
        #expect(changes.first?.value == secret("goes") && changes.first?.deleted == false)
    }

    @Test("a synced item carries its dates, an exported one leaves without them; both carry its other attributes")
    func datesTravelBySyncNotByExport() throws {
        let vault = try enrolledVault()
        var item = cloudItem("dated", "v", accessibility: .afterFirstUnlock)
        item.attributes.label = "label"
        try vault.add(item)
        let synced = try #require(try outbox(vault).first?.attributes)
        #expect(synced.creationDate != nil && synced.modificationDate != nil)
        #expect(synced.label == "label" && synced.accessibility == .afterFirstUnlock && synced.synchronizable == true)
        let exported = try #require(try ItemTransfer.transferableItems(of: vault).items.first?.attributes)
        #expect(exported.creationDate == nil && exported.modificationDate == nil)
        #expect(exported.label == "label" && exported.accessibility == .afterFirstUnlock && exported.synchronizable == true)
    }

    @Test("a write that journals a change tells every observer of this process until it stops observing; a write that journals nothing tells none")
    func journalObserversAreTold() throws {
        let vault = try enrolledVault()
        let told = Mutex(0)
        let first = vault.observeJournal { told.withLock { $0 += 1 } }
        let second = vault.observeJournal { told.withLock { $0 += 10 } }
        try vault.add(cloudItem("one", "v"))
        #expect(told.withLock { $0 } == 11)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "svc", account: "local"), value: secret("stays")))
        #expect(told.withLock { $0 } == 11)
        vault.stopObservingJournal(first)
        try vault.add(cloudItem("two", "v"))
        #expect(told.withLock { $0 } == 21)
        vault.stopObservingJournal(second)
        try vault.add(cloudItem("three", "v"))
        #expect(told.withLock { $0 } == 21)
        #expect(vault.journaledSyncChange)
    }

    @Test("items already in the vault when it enrolls enter the outbox")
    func enrollmentQueuesExistingItems() throws {
        let plain = try Vault(directory.vaultConfiguration())
        try plain.add(cloudItem("before", "v"))
        let vault = try enrolledVault()
        #expect(try outbox(vault).map(\.attributes.account) == ["before"])
    }

    @Test("a delete leaves a tombstone; an update that renames an item leaves one for the old name; clocks only go forward")
    func tombstonesAndClocks() throws {
        let vault = try enrolledVault()
        try vault.add(cloudItem("one", "v1"))
        let first = try #require(try outbox(vault).first)
        try vault.update(Query(.genericPassword, attributes: Attributes(service: "svc", account: "one", synchronizable: true)), attributes: Attributes(account: "two"), value: nil)
        let renamed = try outbox(vault)
        #expect(Set(renamed.map { "\($0.attributes.account!) \($0.deleted)" }) == ["one true", "two false"])
        #expect(renamed.allSatisfy { $0.clock > first.clock || $0.attributes.account == "two" })
        try vault.delete(Query(.genericPassword, attributes: Attributes(service: "svc", account: "two", synchronizable: true)))
        #expect(Set(try outbox(vault).map { "\($0.attributes.account!) \($0.deleted)" }) == ["one true", "two true"])
    }

    @Test("a write never waits for the cluster: with no endpoint answering it succeeds, stays in the outbox, and a round says why it could not send")
    func writesDoNotWait() throws {
        let vault = try enrolledVault()
        try vault.add(cloudItem("offline", "v"))
        #expect(
            try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "svc", account: "offline", synchronizable: true), returnData: true)).first?.value
                == secret("v"))
        let engine = try SyncEngine(vault: vault)
        #expect(throws: SyncError.self) { try engine.syncOnce() }
        #expect(try engine.outboxLength() == 1)
    }

    @Test("a received change applies only when newer, may not bring a ThisDeviceOnly item, and a local write after it wins")
    func receivedChanges() throws {
        let vault = try enrolledVault()
        let far = SyncChange.nextClock(after: 0) + (3_600_000 << 16)
        let origin = Random.bytes(16)
        var change = SyncChange(
            identity: [], clock: far, origin: origin, deleted: false, itemClass: .genericPassword,
            attributes: Attributes(service: "svc", account: "remote", synchronizable: true, accessibility: .whenUnlocked), value: secret("from afar"))
        var bound = change
        bound.attributes.accessibility = .whenUnlockedThisDeviceOnly
        var older = change
        older.clock = far - 1
        older.value = secret("older")
        let result = try vault.withOpened(creating: false) { (open) throws(StoreError) in try open.applyReceived([change, bound, older], state: nil) }
        #expect(result == ApplyResult(applied: 1, superseded: 1, refused: 1))
        let query = Query(.genericPassword, attributes: Attributes(service: "svc", account: "remote", synchronizable: true), returnData: true)
        #expect(try vault.copyMatching(query).first?.value == secret("from afar"))
        #expect(try outbox(vault).isEmpty)
        try vault.update(query, attributes: Attributes(), value: secret("mine"))
        let mine = try #require(try outbox(vault).first)
        #expect(mine.isNewer(thanClock: far, origin: origin))
        change.value = secret("replayed")
        let replay = try vault.withOpened(creating: false) { (open) throws(StoreError) in try open.applyReceived([change], state: nil) }
        #expect(replay.superseded == 1)
    }

    @Test("new keys (a first passphrase, a rekey) keep the journal and the sync state: the outbox still opens, keyed by the new digests")
    func keyRotationKeepsTheJournal() throws {
        let vault = try enrolledVault()
        try vault.add(cloudItem("kept", "v"))
        try vault.withOpened(creating: false) { (open) throws(StoreError) in try open.acknowledge(try open.outbox(limit: 10).entries) }
        try vault.add(cloudItem("pending", "w"))
        try vault.changePassphrase(from: nil, to: secret("first passphrase"))
        try vault.rekey(passphrase: secret("first passphrase"))
        #expect(try outbox(vault).map(\.attributes.account) == ["pending"])
        let state = try vault.withOpened(creating: false) { (open) throws(StoreError) in try open.readSyncState() }
        #expect(state.flatMap { SyncState.decode($0) }?.deviceName == "test")
        try vault.delete(Query(.genericPassword, attributes: Attributes(service: "svc", account: "kept", synchronizable: true)))
        let entries = try vault.withOpened(creating: false) { (open) throws(StoreError) in try open.inUse { (state) throws(StoreError) in try state.journalEntries() } }
        #expect(entries.count == 2 && entries.allSatisfy(\.pending))
    }

    @Test("an enrolled vault's schema is checked like any other: a trigger on the journal is refused")
    func journalSchemaChecked() throws {
        let vault = try enrolledVault()
        try vault.add(cloudItem("x", "v"))
        _ = vault
        #expect(try Vault(directory.vaultConfiguration()).contains(Query(attributes: Attributes(account: "x", synchronizable: true))))
        try RawVault(directory.vaultPath()).connection.execute("CREATE TRIGGER quiet BEFORE UPDATE ON sync_journal BEGIN SELECT RAISE(IGNORE); END")
        #expect {
            _ = try Vault(directory.vaultConfiguration())
        } throws: { error in
            if case .tampered = error as? StoreError { true } else { false }
        }
    }

    @Test("a journal record moved to another item, or edited, fails authentication")
    func journalRecordsSealed() throws {
        let vault = try enrolledVault()
        try vault.add(cloudItem("a", "1"))
        try vault.add(cloudItem("b", "2"))
        let raw = try RawVault(directory.vaultPath())
        var rows: [([UInt8], [UInt8])] = []
        try raw.connection.statement("SELECT identity, record FROM sync_journal").with([]) { (s: Statement) throws(SQLiteError) in
            while try s.step() { rows.append((s.blob(0), s.blob(1))) }
        }
        try raw.connection.statement("UPDATE sync_journal SET record = ? WHERE identity = ?").run([.blob(rows[1].1), .blob(rows[0].0)])
        #expect {
            _ = try outbox(try Vault(directory.vaultConfiguration()))
        } throws: { error in
            if case .tampered = error as? StoreError { true } else { false }
        }
    }

    @Test("the journal is covered by the item ledger: an older record put back, a pending change marked sent or deleted, is caught")
    func journalCoveredByLedger() throws {
        let vault = try enrolledVault()
        try vault.add(cloudItem("a", "1"))
        let raw = try RawVault(directory.vaultPath())
        func record() throws -> (identity: [UInt8], record: [UInt8]) {
            var row: ([UInt8], [UInt8]) = ([], [])
            try raw.connection.statement("SELECT identity, record FROM sync_journal").with([]) { (s: Statement) throws(SQLiteError) in
                if try s.step() { row = (s.blob(0), s.blob(1)) }
            }
            return row
        }
        let older = try record()
        try vault.update(Query(.genericPassword, attributes: Attributes(service: "svc", account: "a", synchronizable: true)), attributes: Attributes(), value: secret("2"))
        let current = try record()
        let read = Query(.genericPassword, attributes: Attributes(service: "svc", account: "a", synchronizable: true), returnData: true)
        func refused(_ edit: String, _ values: [Statement.Value]) throws -> Bool {
            try raw.connection.statement(edit).run(values)
            defer { try? raw.connection.execute("DELETE FROM sync_journal") }
            do {
                _ = try Vault(directory.vaultConfiguration()).copyMatching(read)
                return false
            } catch .tampered {
                return true
            } catch {
                return false
            }
        }
        #expect(try refused("UPDATE sync_journal SET record = ? WHERE identity = ?", [.blob(older.record), .blob(older.identity)]))
        try raw.connection.statement("INSERT OR REPLACE INTO sync_journal(identity, pending, record) VALUES(?, 1, ?)").run([.blob(current.identity), .blob(current.record)])
        #expect(try Vault(directory.vaultConfiguration()).copyMatching(read).first?.value == secret("2"))
        #expect(try refused("UPDATE sync_journal SET pending = 0", []))
        try raw.connection.statement("INSERT OR REPLACE INTO sync_journal(identity, pending, record) VALUES(?, 1, ?)").run([.blob(current.identity), .blob(current.record)])
        #expect(try refused("DELETE FROM sync_journal", []))
    }

    @Test("in an enrolled vault a write of a named item checks its own shard and the journal's: it goes ahead beside a deleted row, not past an edited journal")
    func namedWriteChecksJournalShard() throws {
        let vault = try enrolledVault()
        for index in 0..<16 { try vault.add(Item(.genericPassword, attributes: Attributes(service: "local", account: "l\(index)"), value: secret("\(index)"))) }
        try vault.add(cloudItem("c", "1"))
        let raw = try RawVault(directory.vaultPath())
        let rows = try raw.blobs("SELECT id, identity FROM items ORDER BY id")
        let cloudShard = LedgerShards.shard(of: rows.last!.1)
        let victim = try #require(rows.first { LedgerShards.shard(of: $0.1) != cloudShard })
        let journaled = try raw.blobs("SELECT pending, record FROM sync_journal")
        try raw.connection.execute("DELETE FROM items WHERE id = \(victim.0)")
        try Vault(directory.vaultConfiguration()).upsert(cloudItem("c", "2"))
        // Journaled anew, pending (the outbox itself is read only from a vault the ledger wholly vouches for).
        let rejournaled = try raw.blobs("SELECT pending, record FROM sync_journal")
        #expect(rejournaled.count == 1 && rejournaled[0].0 == 1 && rejournaled[0].1 != journaled[0].1)
        try raw.connection.execute("UPDATE sync_journal SET pending = 0")
        let journal = try raw.blobs("SELECT pending, record FROM sync_journal")
        #expect(throws: StoreError.self, "an edited journal") { try Vault(directory.vaultConfiguration()).upsert(cloudItem("c", "3")) }
        #expect(try raw.blobs("SELECT pending, record FROM sync_journal").map(\.1) == journal.map(\.1))
    }

    @Test("an invitation code round-trips, and a mistyped or truncated one is refused with the reason")
    func invitationCodes() throws {
        let code = InvitationCode(userID: Random.bytes(16), secret: SecretBytes.random(count: 16))
        let parsed = try InvitationCode(parsing: code.text.lowercased())
        #expect(parsed.userID == code.userID && parsed.secret == code.secret)
        #expect(throws: SyncError.self) { try InvitationCode(parsing: String(code.text.dropLast(3))) }
        #expect(throws: SyncError.self) { try InvitationCode(parsing: code.text.replacingOccurrences(of: "-", with: "1")) }
        #expect(throws: SyncError.self) { try InvitationCode(parsing: "KC2-" + code.text.dropFirst(4)) }
    }
}
