import KeychainCore
import KeychainServe

/// Fills `keychain serve`'s `login` collection with the benchmark's items
/// (Benchmarks/secret_service_compare.py: item n has service "keychain-bench", account "user-n",
/// secret "secret-n") in one vault write, as an import writes them: the same rows, index rows
/// and pair lists `CreateItem` writes, without a durable commit per item, which at 100,000
/// items would take most of an hour.
enum ServedFill {
    static func fill(vault path: String, passphrase: String, items: Int) throws {
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false))
        try vault.unlock(passphrase: SecretBytes(utf8: passphrase))
        let entries = (0..<items).map { n in
            ServedItems.Entry(
                source: "bench/\(n)", label: "keychain-bench \(n)",
                attributes: ["xdg:schema": "org.keychain.Bench", "service": "keychain-bench", "account": "user-\(n)"],
                secret: SecretBytes(utf8: "secret-\(n)"), contentType: "text/plain")
        }
        let plan = try ServedItems.planImport([ServedItems.Group(label: "Login", isDefault: true, entries: entries)], into: vault, rule: .refuse)
        try ServedItems.commit(plan, to: vault)
    }
}
