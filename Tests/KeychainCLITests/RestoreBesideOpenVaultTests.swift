import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// A restore never shares a file with a vault another process still has open: SQLite finds a
/// database's `-wal` by name, so a restored vault beside the moved vault's `-wal` would mix both.
@Suite("Restore beside an open vault")
struct RestoreBesideOpenVaultTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath("v.keychain") }
    var movedPath: String { directory.vaultPath("moved.keychain") }
    var backupPath: String { directory.vaultPath("backup.keychain") }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func move(_ from: String, _ to: String) throws { try FileManager.default.moveItem(atPath: from, toPath: to) }

    func accounts(_ path: String) throws -> [String] {
        let listed = try keychain(["list", "--vault", path, "-s", "svc"])
        #expect(listed.status == 0, "\(listed.stderr)")
        return listed.output.split(separator: "\n").map { String($0.split(separator: "\t")[2]) }
    }

    @Test(
        "restore is refused while another process holds the moved vault's sidecars, and while they are left behind; that process's writes to the moved vault fail instead of landing in the sidecars; once they follow the vault, the restore is exactly the backup"
    )
    func restoreBesideOpenVault() throws {
        for account in ["a", "b", "c"] { #expect(try keychain(["set", "--vault", vaultPath, "-s", "svc", account], input: "v-\(account)").status == 0) }
        #expect(try keychain(["backup", "--vault", vaultPath, backupPath]).status == 0)
        // A program (a Valet service, `keychain sync run`) keeps the vault open and writes.
        var live: Vault? = try Vault(VaultConfiguration(location: VaultLocation(path: vaultPath), usesKernelKeyring: false))
        try live?.add(Item(.genericPassword, attributes: Attributes(service: "svc", account: "live-1"), value: SecretBytes(utf8: "x")))
        #expect(exists(vaultPath + "-wal") && exists(vaultPath + "-shm"))

        // The user moves the vault and its key aside, and restores the backup in its place.
        try move(vaultPath, movedPath)
        try move(vaultPath + ".key", movedPath + ".key")
        let held = try keychain(["restore", "--vault", vaultPath, backupPath])
        #expect(held.status != 0, "restored beside a vault still open elsewhere")
        #expect(held.stderr.contains("held open by process \(getpid())"), "\(held.stderr)")
        #expect(!exists(vaultPath), "nothing was put in place")

        // The program's next write goes nowhere silently: it fails, and says why.
        let write = Result { try live?.add(Item(.genericPassword, attributes: Attributes(service: "svc", account: "live-2"), value: SecretBytes(utf8: "y"))) }
        guard case .failure(let error) = write else {
            Issue.record("a write to a vault moved away while open succeeded")
            return
        }
        #expect("\(error)".contains("moved"), "\(error)")
        // Closed, it leaves its last writes in the -wal (SQLite does not checkpoint into a moved file).
        live = nil
        let left = try keychain(["restore", "--vault", vaultPath, backupPath])
        #expect(left.status != 0 && left.stderr.contains("may hold its last writes"), "\(left.stderr)")
        for suffix in ["-wal", "-shm"] { try move(vaultPath + suffix, movedPath + suffix) }

        let restored = try keychain(["restore", "--vault", vaultPath, backupPath])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try accounts(vaultPath).sorted() == ["a", "b", "c"], "the backup, nothing else")
        #expect(try keychain(["verify", "--vault", vaultPath]).status == 0)
        #expect(try accounts(movedPath).sorted() == ["a", "b", "c", "live-1"], "the moved vault kept what the program wrote before the move")
        #expect(try keychain(["verify", "--vault", movedPath]).status == 0)
        #expect(!exists(backupPath + "-wal") && !exists(backupPath + "-shm"), "reading the backup left nothing beside it")
    }

    @Test("a backup or a recovery is refused where a -wal or -shm of another vault is waiting")
    func destinationsWithSidecars() throws {
        #expect(try keychain(["set", "--vault", vaultPath, "-s", "svc", "a"], input: "v").status == 0)
        let stale = directory.file("backup.keychain-wal", "frames of another vault")
        let backup = try keychain(["backup", "--vault", vaultPath, backupPath])
        #expect(backup.status != 0 && backup.stderr.contains(stale), "\(backup.stderr)")
        let recover = try keychain(["recover", "--vault", vaultPath, backupPath])
        #expect(recover.status != 0 && recover.stderr.contains(stale), "\(recover.stderr)")
        #expect(!exists(backupPath))
    }
}
