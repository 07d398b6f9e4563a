import KeychainCore
import KeychainServe

/// How many items `status` shows: items as `list` shows them, one for each item other
/// programs stored through `keychain serve` (kept in several rows: its secret, its record, an
/// index row per attribute pair), not the vault's rows.
enum ItemCount {
    /// The items of `vault`, or nil when some cannot be read now (a locked class): `status`
    /// then shows the rows, saying so. A locked vault is not counted, so that `status` never
    /// unlocks it with a passphrase the environment offers.
    static func of(_ vault: Vault, _ status: VaultStatus) -> Int? {
        guard !status.hasPassphrase || status.isUnlocked else { return nil }
        let items: [Item]
        do {
            items = try vault.copyMatching(Query(returnAttributes: true))
        } catch .itemNotFound {
            // An open vault that holds no item: nothing is left uncounted.
            return 0
        } catch {
            return nil
        }
        let (served, others) = ServedItemRow.split(items)
        return served.count + others.count
    }

    /// The `items:` line's value: the items, or the rows and why they are not items.
    static func text(_ vault: Vault, _ status: VaultStatus) -> String {
        of(vault, status).map(String.init) ?? "\(status.itemCount) rows (items are counted once the vault is unlocked)"
    }
}
