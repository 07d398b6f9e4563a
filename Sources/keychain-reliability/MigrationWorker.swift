import Foundation
import KeychainCore
import Valet
import ValetNaming

/// A child process for the crash tests of Valet's migration: fills a source Valet (in one
/// transaction), says "migrating", then moves everything into the destination Valet. The
/// parent kills it at a random moment and checks that the destination is all or nothing.
enum MigrationWorker {
    static let source = Identifier(nonEmpty: "MigrationSource")!
    static let destination = Identifier(nonEmpty: "MigrationDestination")!

    static func run(vaultPath: String, count: Int) throws -> Int32 {
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: vaultPath), usesKernelKeyring: false))
        ValetStore.setDefault(vault)
        let from = Valet.valet(with: source, accessibility: .afterFirstUnlock)
        let into = Valet.valet(with: destination, accessibility: .afterFirstUnlock)
        if try from.allKeys().isEmpty && into.allKeys().isEmpty {
            // One transaction for the fill: the same item a Valet writes, without a durable commit per key.
            try vault.write(
                (0..<count).map { index in
                    .upsert(
                        ValetAddress.valet(with: source, accessibility: .afterFirstUnlock).item(
                            forKey: "key-\(index)", value: SecretBytes(utf8: "value-\(index)-" + String(repeating: "x", count: 64))))
                })
        }
        FileHandle.standardOutput.write(Data("migrating\n".utf8))
        try into.migrateObjects(from: from, removeOnCompletion: true)
        FileHandle.standardOutput.write(Data("done\n".utf8))
        return 0
    }
}
