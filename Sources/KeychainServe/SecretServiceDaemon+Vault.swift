import KeychainCore

extension SecretServiceDaemon {
    /// The daemon over `vault`, serving what `keychain serve` serves: `login` (the vault, the
    /// `default` alias), `session` (memory), the synchronized collection (the `sync` alias,
    /// unless the user pointed it elsewhere), and the collections `CreateCollection` made
    /// before (those of a vault locked since boot come at the first call after it opens:
    /// ``loadVaultContents()``).
    convenience init(serving vault: Vault, on bus: BusConnection?) {
        let created = VaultCollection.createdNames(in: vault).filter { $0 != "login" && $0 != "session" }.map {
            VaultCollection(name: $0, label: "", store: vault)
        }
        let login = VaultCollection(name: "login", label: "Login", store: vault)
        let synchronized = VaultCollection.synchronized(in: vault)
        for collection in [login] + created { collection.countPairsIfNeeded() }
        self.init(
            bus: bus, vault: vault, collections: [login, MemoryCollection(name: "session", label: "Session"), synchronized] + created,
            defaultCollection: "login")
        collections.setAlias("session", to: "session")
        // Unless the user pointed `sync` elsewhere (SetAlias, kept in the vault): theirs wins,
        // now or when the vault's aliases can be read.
        if collections.aliases[VaultCollection.synchronizedScope] == nil { collections.setAlias(VaultCollection.synchronizedScope, to: synchronized.name) }
    }
}
