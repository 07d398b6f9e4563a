import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Raw access to a vault's tables, to alter what an attacker or a bad disk could.
struct RawVault {
    let connection: Connection
    init(_ path: String) throws { connection = try Connection(path: path, create: false) }

    func blobs(_ sql: String) throws -> [(Int64, [UInt8])] {
        var rows: [(Int64, [UInt8])] = []
        try connection.statement(sql).with([]) { (s: Statement) throws(SQLiteError) in
            while try s.step() { rows.append((s.integer(0), s.blob(1))) }
        }
        return rows
    }

    func set(_ sql: String, _ blob: [UInt8], _ id: Int64) throws {
        try connection.statement(sql).run([.blob(blob), .integer(id)])
    }

    func flip(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var copy = bytes
        copy[index] ^= 0x40
        return copy
    }
}

@Suite("Tampering and corruption are detected, never returned as data")
struct TamperTests {
    let directory = TemporaryDirectory()

    func populatedVault() throws -> Vault {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("alpha")))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "b"), value: secret("bravo")))
        return vault
    }

    func readAll(_ vault: Vault) throws -> [String] {
        try vault.copyMatching(Query(.genericPassword, returnData: true)).map { $0.value!.string }
    }

    /// The first item ("a", "alpha"), read by its identity.
    func readFirst(_ vault: Vault) throws -> String? {
        try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "a"), returnData: true)).first?.value?.string
    }

    func expectTampered(_ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected a tampering or corruption error")
        } catch let error as StoreError {
            switch error {
            case .tampered, .corrupted: break
            default: Issue.record("expected tampered or corrupted, got \(error)")
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("swapping two rows' ciphertexts is detected")
    func swappedCiphertexts() throws {
        _ = try populatedVault()
        let raw = try RawVault(directory.vaultPath())
        let values = try raw.blobs("SELECT id, value FROM items ORDER BY id")
        try raw.set("UPDATE items SET value = ? WHERE id = ?", values[1].1, values[0].0)
        try raw.set("UPDATE items SET value = ? WHERE id = ?", values[0].1, values[1].0)
        expectTampered { _ = try readAll(try Vault(directory.vaultConfiguration())) }
    }

    @Test(
        "a flipped byte in a value, in attributes, or in a lookup digest is detected or finds nothing",
        arguments: ["value", "attributes"])
    func flippedCiphertextByte(column: String) throws {
        _ = try populatedVault()
        let raw = try RawVault(directory.vaultPath())
        let rows = try raw.blobs("SELECT id, \(column) FROM items ORDER BY id")
        try raw.set("UPDATE items SET \(column) = ? WHERE id = ?", raw.flip(rows[0].1, at: rows[0].1.count / 2), rows[0].0)
        expectTampered { _ = try readFirst(try Vault(directory.vaultConfiguration())) }
        #expect(try readAll(try Vault(directory.vaultConfiguration())) == ["bravo"], "the damaged item is passed over, the other still read")
    }

    @Test("a flipped byte in a wrapped class key is detected")
    func flippedWrappedKey() throws {
        _ = try populatedVault()
        let raw = try RawVault(directory.vaultPath())
        let keys = try raw.blobs("SELECT protection, wrapped FROM class_keys")
        try raw.set("UPDATE class_keys SET wrapped = ? WHERE protection = ?", raw.flip(keys[0].1, at: 20), keys[0].0)
        expectTampered { _ = try readAll(try Vault(directory.vaultConfiguration())) }
    }

    @Test("a flipped byte anywhere in the header is detected", arguments: [0, 5, 10, 22, 30, 60, 90, 120])
    func flippedHeaderByte(index: Int) throws {
        _ = try populatedVault()
        let raw = try RawVault(directory.vaultPath())
        let header = try raw.blobs("SELECT 0, value FROM meta WHERE name = 'header'")[0].1
        try raw.connection.statement("UPDATE meta SET value = ? WHERE name = 'header'").run([.blob(raw.flip(header, at: index % header.count))])
        do {
            let vault = try Vault(directory.vaultConfiguration())
            _ = try readAll(vault)
            Issue.record("a damaged header was accepted")
        } catch let error as StoreError {
            switch error {
            case .tampered, .corrupted, .unsupportedFormatVersion: break
            default: Issue.record("expected a tampering error, got \(error)")
            }
        }
    }

    @Test(
        "a header asking for a weak scrypt, or for more than 256 MiB and about a second, is refused at once",
        arguments: [
            ScryptParameters(logN: 10), ScryptParameters(logN: 26, r: 8, p: 1), ScryptParameters(logN: 20, r: 512, p: 1),
            ScryptParameters(logN: 19, r: 15, p: 16), ScryptParameters(logN: 19), ScryptParameters(logN: 17, r: 8, p: 2),
            ScryptParameters(logN: 16, r: 16, p: 1),
        ])
    func scryptLimitsEnforced(parameters: ScryptParameters) throws {
        let vault = try populatedVault()
        try vault.changePassphrase(from: nil, to: secret("pw"))
        let raw = try RawVault(directory.vaultPath())
        var header = try VaultHeader.decode(try raw.blobs("SELECT 0, value FROM meta WHERE name = 'header'")[0].1)
        guard case .passphrase(_, let salt) = header.protection else { Issue.record("no passphrase"); return }
        header.protection = .passphrase(parameters, salt: salt)
        try raw.connection.statement("UPDATE meta SET value = ? WHERE name = 'header'").run([.blob(header.encoded())])
        #expect(!parameters.isWithinLimits)
        expectTampered { _ = try Vault(directory.vaultConfiguration()) }
    }

    @Test("a row pasted in from another vault does not open")
    func foreignRowRefused() throws {
        _ = try populatedVault()
        let other = TemporaryDirectory()
        let foreign = try Vault(other.vaultConfiguration())
        try foreign.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("foreign")))
        let source = try RawVault(other.vaultPath())
        let row = try source.blobs("SELECT id, value FROM items")[0].1
        let raw = try RawVault(directory.vaultPath())
        let target = try raw.blobs("SELECT id, value FROM items ORDER BY id")[0].0
        try raw.set("UPDATE items SET value = ? WHERE id = ?", row, target)
        expectTampered { _ = try readFirst(try Vault(directory.vaultConfiguration())) }
        #expect(try readAll(try Vault(directory.vaultConfiguration())) == ["bravo"])
    }

    @Test("a file that is not a vault, or an SQLite database of something else, is refused as corrupted")
    func notAVault() throws {
        let garbage = directory.vaultPath("garbage.keychain")
        _ = FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0x5A, count: 8192), attributes: [.posixPermissions: 0o600])
        expectTampered { _ = try Vault(directory.vaultConfiguration(name: "garbage.keychain")) }
        let other = directory.vaultPath("other.keychain")
        _ = FileManager.default.createFile(atPath: other, contents: nil, attributes: [.posixPermissions: 0o600])
        try Connection(path: other, create: false).execute("CREATE TABLE notes(x)")
        expectTampered { _ = try Vault(directory.vaultConfiguration(name: "other.keychain")) }
    }

    @Test("a header from a future format version is refused with unsupportedFormatVersion")
    func futureVersionRefused() throws {
        _ = try populatedVault()
        let raw = try RawVault(directory.vaultPath())
        var header = try VaultHeader.decode(try raw.blobs("SELECT 0, value FROM meta WHERE name = 'header'")[0].1)
        header.version = 9
        try raw.connection.statement("UPDATE meta SET value = ? WHERE name = 'header'").run([.blob(header.encoded())])
        #expect(throws: StoreError.unsupportedFormatVersion(9)) { _ = try Vault(directory.vaultConfiguration()) }
    }
}
