import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// The generic password the ledger and rollback suites write: service "s", `account`, `value`.
func genericPassword(_ account: String, _ value: String) -> Item {
    Item(.genericPassword, attributes: Attributes(service: "s", account: account), value: SecretBytes(utf8: value))
}

/// The value of service "s"'s `account` in `vault`, or nil when there is none.
func genericPasswordValue(_ vault: Vault, _ account: String) throws(StoreError) -> String? {
    try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: account), limit: .one, returnData: true))
        .first?.value?.string
}

/// Writes `older` then `current` under `account`, and puts the copy of the file taken between
/// the two back in the vault's place, as an attacker with an older copy does.
func rollBack(_ configuration: VaultConfiguration, account: String, older: String, current: String, scratch: String) throws {
    let vault = try Vault(configuration)
    try vault.add(genericPassword(account, older))
    let copy = scratch + "/older.keychain"
    try vault.backup(to: copy)
    try vault.upsert(genericPassword(account, current))
    let path = configuration.location.path
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    guard rename(copy, path) == 0 else { throw StoreError.io("could not put the older copy back") }
}
