import Foundation
import Testing

/// The line between the vault and sync that ARCHITECTURE.md draws, kept where `internal` cannot
/// keep it (both are KeychainCore): sync works through the vault's `JournaledVault`, and the
/// vault tells observers of its journal without naming who they are.
@Suite("Sync and the vault meet only at the journal's interface")
struct SyncVaultLineTests {
    /// The code lines (comments left out) of KeychainCore's files under `folder`, each with its path.
    static func codeLines(under folder: String) -> [(path: String, line: Substring)] {
        ArchitectureDocumentTests.sources.filter { $0.path.hasPrefix("Sources/KeychainCore/\(folder)/") }.flatMap { file in
            file.text.split(separator: "\n").filter { !$0.drop { $0 == " " }.hasPrefix("//") }.map { (file.path, $0) }
        }
    }

    /// Each line of `lines` that names one of `names` as a whole word.
    static func naming(_ names: [String], in lines: [(path: String, line: Substring)]) -> [String] {
        let word = try! Regex("(?:^|[^A-Za-z0-9_])(?:\(names.joined(separator: "|")))(?![A-Za-z0-9_])")
        return lines.filter { $0.line.contains(word) }.map { "\($0.path): \($0.line.drop { $0 == " " })" }
    }

    @Test("no file of Sync/ names the open vault's types or reaches past the journal's interface")
    func syncNamesNoVaultInternals() {
        let strays = Self.naming(["VaultEngine", "VaultState", "Session", "withOpened", "openedIfPresent"], in: Self.codeLines(under: "Sync"))
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test("no file of Vault/ names the sync engine or sets anything of it")
    func vaultNamesNoSyncEngine() {
        let strays = Self.naming(["SyncEngine", "SyncRecords", "EtcdClient", "SyncState"], in: Self.codeLines(under: "Vault"))
        #expect(strays.isEmpty, "\(strays)")
    }
}
