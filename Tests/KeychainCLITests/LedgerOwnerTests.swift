import Foundation
import Testing

/// The owners ARCHITECTURE.md names for the item ledger and the identity memo, kept where
/// `internal` cannot keep them (the vault's files are one module): each is a value whose
/// stored state only its own file's methods change, and the vault holds it as a field it
/// never replaces.
@Suite("The ledger and the identity memo change only through their own methods")
struct LedgerOwnerTests {
    /// The code lines (comments left out) of `path`.
    static func codeLines(of path: String) -> [Substring] {
        guard let file = ArchitectureDocumentTests.sources.first(where: { $0.path == path }) else { return [] }
        return file.text.split(separator: "\n").filter { !$0.drop { $0 == " " }.hasPrefix("//") }
    }

    static let owners: [(type: String, file: String, field: String)] = [
        ("Ledger", "Sources/KeychainCore/Vault/Ledger/Ledger.swift", "ledger"),
        ("LedgerState", "Sources/KeychainCore/Vault/Ledger/LedgerState.swift", "ledger"),
        ("IdentityMemo", "Sources/KeychainCore/Vault/Items/IdentityMemo.swift", "identityMemo"),
    ]

    @Test("each owner's stored properties are private to its file, or set only there")
    func storedStateIsPrivate() {
        var open: [String] = []
        for owner in Self.owners {
            let lines = Self.codeLines(of: owner.file)
            #expect(!lines.isEmpty, "\(owner.file) is missing")
            // A stored property: declared at the type's top level, with no body of its own.
            for line in lines where line.hasPrefix("    var ") {
                if line.contains("{") { continue }
                open.append("\(owner.file): \(line.drop { $0 == " " })")
            }
        }
        #expect(open.isEmpty, "settable from outside its owner: \(open)")
    }

    @Test("no other file extends an owner, and the ledger keeper takes no ledger state made elsewhere")
    func noSideDoorIn() {
        var strays: [String] = []
        for file in ArchitectureDocumentTests.sources where file.path.hasPrefix("Sources/") {
            for owner in Self.owners where file.path != owner.file {
                if file.text.contains(try! Regex("extension \(owner.type)(?![A-Za-z0-9_])")) { strays.append("\(file.path) extends \(owner.type)") }
            }
        }
        // A `LedgerState` changed outside the keeper cannot be put back: no method or
        // initialiser of `Ledger` takes one.
        for line in Self.codeLines(of: Self.owners[0].file) where line.contains("func ") || line.contains("init(") {
            let parameters = line.drop { $0 != "(" }
            if parameters.contains(": LedgerState") { strays.append("Ledger takes a LedgerState: \(line.drop { $0 == " " })") }
        }
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test("the vault holds each owner as a field it never replaces")
    func fieldsAreNeverReplaced() {
        var replaced: [String] = []
        // The files of `VaultState` (`KeyRing` has a `ledger` of its own: the ledger's key).
        let vaultFiles = ArchitectureDocumentTests.sources.filter {
            $0.path.hasPrefix("Sources/KeychainCore/") && ($0.text.contains("extension VaultState") || $0.text.contains("final class VaultState"))
        }
        #expect(vaultFiles.count > 10)
        for file in vaultFiles {
            for (index, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // `field = ...` or `self.field = ...`, but not a local of that name declared.
                for field in Set(Self.owners.map(\.field)) {
                    let assignment = try! Regex("(?:^|[^A-Za-z0-9_.]|self\\.)(let |var )?\(field)\\s*=[^=]")
                    if line.matches(of: assignment).contains(where: { $0.output[1].substring == nil }) {
                        replaced.append("\(file.path):\(index + 1): \(line.drop { $0 == " " })")
                    }
                }
            }
        }
        #expect(replaced.isEmpty, "\(replaced)")
    }
}
