import Testing

/// The item table's owner (``ItemTable``, ARCHITECTURE.md's owners table) stays its owner: the
/// statements that read and write item rows are run from its file only, and neither it nor the
/// row sealing reaches for a key, the ledger, the journal or the lock state, which stay with
/// the vault that coordinates them.
@Suite("The item table runs its own statements, and knows no key, ledger or journal")
struct ItemTableOwnerTests {
    static let table = "Sources/KeychainCore/Vault/Items/ItemTable.swift"
    static let parts = [table, "Sources/KeychainCore/Vault/Items/RowSealing.swift", "Sources/KeychainCore/Vault/Items/ItemRow.swift"]
    /// `VaultSchema`'s statements on item rows (an upgrade's rebuild of the table, and the
    /// ledger's and the scope index's counting passes, are theirs).
    static let statements = [
        "select", "selectByIdentity", "selectAllItems", "selectCarriedItems", "selectPasscodeBound", "anyCarriedItem", "selectValue", "insertItem",
        "replaceItem", "replaceItemKeepingDigests", "deleteItem", "countItems",
    ]

    @Test("the statements on item rows are run from ItemTable's file only")
    func statementsRunOnlyThere() throws {
        var strays: [String] = []
        for file in ArchitectureDocumentTests.sources where file.path.hasPrefix("Sources/") && file.path != Self.table {
            for name in Self.statements where file.text.contains(try Regex("VaultSchema\\.\(name)(?![A-Za-z0-9_])")) {
                strays.append("\(file.path) runs VaultSchema.\(name)")
            }
        }
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test("a row is looked up or written through the item table only where its ledger shard is checked first")
    func shardCheckedAccessOnly() throws {
        // VaultState.row(identity:) and the writes in VaultState+Items check the shard, then
        // call the table; anywhere else, a call would read or write past the ledger.
        let checked = ["Sources/KeychainCore/Vault/Items/VaultState+Rows.swift", "Sources/KeychainCore/Vault/Items/VaultState+Items.swift"]
        var strays: [String] = []
        for file in ArchitectureDocumentTests.sources where file.path.hasPrefix("Sources/") && !checked.contains(file.path) {
            for line in file.text.split(separator: "\n") where line.contains(/items\.(?:row|insert|overwrite|delete)\(/) {
                strays.append("\(file.path): \(line.drop { $0 == " " })")
            }
        }
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test("the item table and the row sealing name no key lookup, ledger, journal or lock state")
    func partsKnowNoCoordination() {
        let words = ["ledger", "journal", "lockState", "classKey", "lookupKey", "dropKeysIfRotated", "storedPresenceKey", "ReadContext"]
        var strays: [String] = []
        for path in Self.parts {
            let lines = LedgerOwnerTests.codeLines(of: path)
            #expect(!lines.isEmpty, "\(path) is missing")
            for line in lines {
                // What the code calls, not what its messages say.
                let code = line.replacing(/"[^"]*"/, with: "").localizedLowercase
                for word in words where code.contains(word.localizedLowercase) { strays.append("\(path): \(line.drop { $0 == " " })") }
            }
        }
        #expect(strays.isEmpty, "\(strays)")
    }
}
