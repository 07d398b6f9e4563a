import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Where one operation's power-loss exploration runs: `root` is the tree whose crash states are
/// explored (the user's home, with the default vault under it); `secrets` beside it holds what
/// the command reads but a power cut does not touch (passphrase files, a backup, an archive).
struct PowerLossPlace {
    let root: String
    let secrets: String
    let keychain: String
    /// The etcd cluster of the sync round (nil for the other operations).
    var cluster: SyncCluster? = nil
    /// The private session bus of the operations that reach the Secret Service (nil for the others).
    var bus: ServedVault? = nil

    var home: String { root + "/home" }
    var vaultDirectory: String { home + "/.local/share/keychain" }
    /// The default vault, relative to `root`.
    static let vault = "home/.local/share/keychain/default.keychain"
    var vaultPath: String { root + "/" + Self.vault }

    var environment: [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": home, "KEYCHAIN_KERNEL_KEYRING": "off"].merging(bus.map { ["DBUS_SESSION_BUS_ADDRESS": $0.busAddress] } ?? [:]) { $1 }
    }

    /// Runs the command, untraced, to prepare the tree; fails the preparation if it fails.
    func keychain(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws {
        let result = try Subprocess.run(keychain, arguments, environment: environment.merging(extra) { $1 }, input: Data(input.utf8))
        guard result.status == 0 else { throw FileTrace.Failure(description: "preparing with keychain \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
    }

    /// A file only the user reads, outside the explored tree.
    func secret(_ name: String, _ contents: String) -> String {
        let path = secrets + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        return path
    }

    /// The default vault with three Valet items, made by the command.
    func vaultWithItems() throws {
        for (key, value) in [("a", "alpha"), ("b", "bravo"), ("c", "charlie")] {
            try keychain(["set", "-i", "PowerLoss", key], input: value)
        }
    }

    /// The default vault with three items, enrolled in a sync group with a second vault (in
    /// `secrets`) that has sent it three synchronizable items it has not received yet.
    func vaultWithChangesToReceive() throws {
        guard let cluster else { throw FileTrace.Failure(description: "the sync round needs an etcd cluster") }
        try vaultWithItems()
        let configuration = { (path: String) in
            VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false, syncsInBackground: false)
        }
        let sender = try Vault(configuration(secrets + "/sender.keychain"))
        let alpha = try SyncEngine.create(vault: sender, cluster: cluster, deviceName: "alpha")
        _ = try SyncEngine.join(vault: try Vault(configuration(vaultPath)), cluster: cluster, code: try alpha.invite(), deviceName: "beta")
        for (key, value) in [("s1", "sierra"), ("s2", "tango"), ("s3", "uniform")] {
            let attributes = Attributes(service: "synced", account: key, synchronizable: true, accessibility: .afterFirstUnlock)
            try sender.upsert(Item(.genericPassword, attributes: attributes, value: SecretBytes(utf8: value)))
        }
        _ = try alpha.syncOnce()
    }

    /// The default vault with three items under the passphrase "old" (scrypt at its cheapest,
    /// so that checking thousands of states stays quick).
    func passphraseVaultWithItems() throws {
        try vaultWithItems()
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: vaultPath), scryptParameters: .minimum, usesKernelKeyring: false))
        try vault.changePassphrase(from: nil, to: SecretBytes(utf8: "old"))
    }
}

extension PowerLossPlace {
    /// The default vault with three Valet items, and two items this tool stored in the Secret
    /// Service that `keychain serve` on the bus provides from a vault outside the tree.
    func vaultWithSecretServiceItems() throws {
        try vaultWithItems()
        for (key, value) in [("m1", "mike"), ("m2", "november")] {
            try keychain(["set", "--backend", "secret-service", "-i", "Migrated", key], input: value)
        }
    }

    /// The default vault with three Valet items, and three items other programs stored in the
    /// provider on the bus (`keychain serve` of a vault outside the tree), two of them of one
    /// identity: what `migrate --foreign` plans and moves in one vault write.
    func vaultWithForeignItems() throws {
        try vaultWithItems()
        try secretTool(["store", "--label=Foreign", "service", "foreign", "account", "one"], input: "oscar")
        try secretTool(["store", "--label=Foreign two", "service", "foreign", "account", "two"], input: "papa")
        guard let bus else { throw FileTrace.Failure(description: "no session bus") }
        let script =
            "import secretstorage; c = secretstorage.dbus_init(); secretstorage.get_default_collection(c).create_item('Foreign again', {'service': 'foreign', 'account': 'one'}, b'quebec', replace=False)"
        if let python = ProcessInfo.processInfo.environment["KEYCHAIN_TEST_PYTHON"], !python.isEmpty {
            let made = try bus.run(python, ["-c", script])
            guard made.status == 0 else { throw FileTrace.Failure(description: "the second item of one identity was not stored: \(made.stderr)") }
        }
    }

    /// What a Secret Service client does while `keychain serve` runs on the tree's vault: it
    /// stores one item (secret-tool's CreateItem); its return is the acknowledgement.
    func storeThroughTheDaemon() throws {
        try secretTool(["store", "--label=Power loss", "service", "power-loss", "account", "served"], input: "served secret")
    }

    /// What a client does to remove that item (secret-tool's search, then the item's Delete).
    func clearThroughTheDaemon() throws {
        try secretTool(["clear", "service", "power-loss", "account", "served"])
    }

    /// The default vault with three Valet items and the one a client stored through `keychain
    /// serve`, which served it untraced for that and stopped.
    func vaultWithServedItem() throws {
        try vaultWithItems()
        guard let bus else { throw FileTrace.Failure(description: "no session bus") }
        try bus.startServing(["--vault", vaultPath])
        defer { bus.stopServing() }
        try storeThroughTheDaemon()
    }

    /// The default vault with three Valet items and an item of the `sync` collection as its
    /// sender's `keychain serve` (on the bus, over a vault in `secrets`) first stored it (its
    /// secret, record and two index rows), enrolled in one sync group with that sender,
    /// which has since stored the item again (another label and secret), given it a third
    /// attribute (where gdbus is installed) and stored a second item: what the traced round
    /// receives, each item a unit of several rows.
    func vaultWithServedArrival() throws {
        guard let cluster, let bus else { throw FileTrace.Failure(description: "a served item's arrival needs an etcd cluster and a session bus") }
        try vaultWithItems()
        let senderPath = secrets + "/sender.keychain"
        let configuration = { (path: String) in
            VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false, syncsInBackground: false)
        }
        let alpha = try SyncEngine.create(vault: try Vault(configuration(senderPath)), cluster: cluster, deviceName: "alpha")
        _ = try SyncEngine.join(vault: try Vault(configuration(vaultPath)), cluster: cluster, code: try alpha.invite(), deviceName: "beta")
        // Each version is stored by the sender's daemon, which then stops; an engine of the
        // check's own sends what it left, so that nothing is still on its way when the trace starts.
        let served = { (items: [(label: String, account: String, secret: String)], extraAttribute: Bool) throws in
            try bus.startServing(["--vault", senderPath], environment: ["KEYCHAIN_SYNC_AGENT": "off"])
            defer { bus.stopServing() }
            for item in items {
                try secretTool(["store", "--label=\(item.label)", "--collection=sync", "service", "power-loss", "account", item.account], input: item.secret)
            }
            if extraAttribute { try addAttribute(bus) }
        }
        try served([("First version", "arriving", "first secret")], false)
        _ = try SyncEngine(vault: try Vault(configuration(senderPath))).syncOnce()
        _ = try SyncEngine(vault: try Vault(configuration(vaultPath))).syncOnce()
        try served([("Second version", "arriving", "second secret"), ("New", "new", "new secret")], FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus"))
        _ = try SyncEngine(vault: try Vault(configuration(senderPath))).syncOnce()
    }

    /// Gives the arriving item a third attribute pair (its Attributes property, set with gdbus):
    /// a new version with an index row more than the one before.
    private func addAttribute(_ bus: ServedVault) throws {
        let found = try bus.run("/usr/bin/secret-tool", ["search", "service", "power-loss", "account", "arriving"])
        guard let header = found.output.split(separator: "\n").first(where: { $0.hasPrefix("[") }), let id = header.dropFirst().dropLast().split(separator: "/").last
        else { throw FileTrace.Failure(description: "secret-tool search did not find the arriving item: \(found.stderr)") }
        let set = try bus.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets/collection/sync/\(id)", "--method",
                "org.freedesktop.DBus.Properties.Set", "org.freedesktop.Secret.Item", "Attributes",
                "<{'service': 'power-loss', 'account': 'arriving', 'extra': 'third'}>",
            ])
        guard set.status == 0 else { throw FileTrace.Failure(description: "setting the arriving item's attributes failed: \(set.stderr)") }
    }

    private func secretTool(_ arguments: [String], input: String = "") throws {
        guard let bus, bus.waitForProvider() else { throw FileTrace.Failure(description: "keychain serve never took org.freedesktop.secrets") }
        let run = try bus.run("/usr/bin/secret-tool", arguments, input: input)
        guard run.status == 0 else { throw FileTrace.Failure(description: "secret-tool \(arguments[0]) failed: \(run.stderr)") }
    }
}

/// One operation of the `keychain` command whose crash states are explored: how its tree is
/// prepared, the command line traced, and which vault files to check in every state.
struct PowerLossOperation {
    let name: String
    let prepare: (PowerLossPlace) throws -> Void
    let arguments: (PowerLossPlace) -> [String]
    var input = ""
    var environment: (PowerLossPlace) -> [String: String] = { _ in [:] }
    /// The vault files checked in every state, relative to the root.
    var watched = [PowerLossPlace.vault]
    /// The passphrases a user may have been told are the vault's (before and after).
    var passphrases: [String] = []
    /// The machine identity file the vault's ThisDeviceOnly items are bound to, if not this machine's.
    var machineIdentityFile: ((PowerLossPlace) -> String)? = nil
    /// The operation also upgrades the vault's format in a transaction of its own: a state that
    /// holds the items as before in the new format is whole too.
    var upgrades = false
    /// Tell vaults apart by their keys too (a rekey changes nothing else a reader sees).
    var changesKeys = false
    /// Whole states of a watched vault between before and after (a step the command commits
    /// on its own before the rest), by watched path.
    var intermediates: [String: [VaultReading]] = [:]
    /// What the operation needs of the Secret Service: nothing, a private session bus, or one
    /// with `keychain serve` providing it from a vault outside the tree.
    var bus: BusNeed = .none
    /// For a daemon: what its client does while it runs (the acknowledgement is its return).
    var client: ((PowerLossPlace) throws -> Void)? = nil
    /// Files other than vaults checked in every state, relative to the root: each a new
    /// archive, which must be whole (opened by `archivePassphrase`) or absent.
    var archives: [String] = []
    /// How many distinct states of each model quick mode checks (a seeded sample, the states
    /// after the command ended always among them): fewer where every check costs a scrypt of
    /// the command's own strength.
    var quickBudget = 30
    /// The choices of unsynced writes listed in full at one point of the trace in long mode
    /// (beyond it, this many chosen by the seed): lower where each check costs that scrypt.
    var longLimit = 4_096

    enum BusNeed { case none, bus, provider }

    /// The sync round: `keychain sync run --once` receiving and applying another device's changes.
    static var syncRound: PowerLossOperation {
        PowerLossOperation(
            name: "sync round", prepare: { try $0.vaultWithChangesToReceive() }, arguments: { _ in ["sync", "run", "--once"] })
    }

    /// A served item's arrival: `keychain sync run --once` receiving a new version of an item
    /// of the `sync` collection (its secret, record and index rows) and a new item.
    static var servedArrival: PowerLossOperation {
        PowerLossOperation(
            name: "sync round (a served item's arrival)", prepare: { try $0.vaultWithServedArrival() }, arguments: { _ in ["sync", "run", "--once"] })
    }

    /// The passphrase the archives of `export` and `import` are sealed under.
    static let archivePassphrase = "archive"

    /// The operations that reach the Secret Service on a private bus: `keychain serve`'s
    /// CreateItem and Delete, and `migrate` both ways between the vault and a provider outside the tree.
    static var secretService: [PowerLossOperation] {
        [
            PowerLossOperation(
                name: "serve (CreateItem by secret-tool)", prepare: { try $0.vaultWithItems() }, arguments: { _ in ["serve"] }, bus: .bus,
                client: { try $0.storeThroughTheDaemon() }),
            PowerLossOperation(
                name: "serve (Delete by secret-tool clear)", prepare: { try $0.vaultWithServedItem() }, arguments: { _ in ["serve"] }, bus: .bus,
                client: { try $0.clearThroughTheDaemon() }),
            PowerLossOperation(
                name: "migrate (into the vault)", prepare: { try $0.vaultWithSecretServiceItems() },
                arguments: { _ in ["migrate", "--from", "secret-service", "--to", "vault"] }, bus: .provider),
            PowerLossOperation(
                name: "migrate (out of the vault)", prepare: { try $0.vaultWithItems() },
                arguments: { _ in ["migrate", "--from", "vault", "--to", "secret-service"] }, bus: .provider),
            // The provider deletes only after the vault's write is durable: a state of the vault
            // before it is one in which the provider still holds every item.
            PowerLossOperation(
                name: "migrate --foreign (into the vault)", prepare: { try $0.vaultWithForeignItems() },
                arguments: { _ in ["migrate", "--foreign", "--from", "secret-service", "--to", "vault"] }, bus: .provider),
        ]
    }

    static func all(fixtures: String?) -> [PowerLossOperation] {
        let passphraseFiles: (PowerLossPlace) -> [String: String] = { place in
            ["KEYCHAIN_PASSPHRASE_FILE": place.secret("old", "old"), "KEYCHAIN_NEW_PASSPHRASE_FILE": place.secret("new", "new")]
        }
        var operations = [
            PowerLossOperation(
                name: "creation", prepare: { place in mkdir(place.home, 0o700) }, arguments: { _ in ["set", "-i", "PowerLoss", "first"] }, input: "one",
                intermediates: [PowerLossPlace.vault: [.emptyVault]]),
            PowerLossOperation(
                name: "passwd (first passphrase)", prepare: { try $0.vaultWithItems() }, arguments: { _ in ["passwd"] }, environment: passphraseFiles,
                passphrases: ["new"], quickBudget: 4, longLimit: 16),
            PowerLossOperation(
                name: "passwd (change)", prepare: { try $0.passphraseVaultWithItems() }, arguments: { _ in ["passwd"] }, environment: passphraseFiles,
                passphrases: ["new", "old"], quickBudget: 4, longLimit: 16),
            PowerLossOperation(
                name: "passwd (removal)", prepare: { try $0.passphraseVaultWithItems() }, arguments: { _ in ["passwd", "--remove"] },
                environment: passphraseFiles, passphrases: ["old"]),
            PowerLossOperation(
                name: "rekey", prepare: { try $0.passphraseVaultWithItems() }, arguments: { _ in ["rekey"] }, environment: passphraseFiles,
                passphrases: ["old"], changesKeys: true, quickBudget: 4, longLimit: 16),
            PowerLossOperation(
                name: "restore",
                prepare: { place in
                    try place.vaultWithItems()
                    try place.keychain(["backup", place.secrets + "/backup.keychain"])
                    for file in [place.vaultPath, place.vaultPath + ".key"] { unlink(file) }
                },
                arguments: { ["restore", $0.secrets + "/backup.keychain"] }),
            PowerLossOperation(
                name: "import",
                prepare: { place in
                    try place.vaultWithItems()
                    let other = ["KEYCHAIN_PATH": place.secrets + "/other.keychain", "KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": place.secret("archive", archivePassphrase)]
                    for (key, value) in [("x", "x-ray"), ("y", "yankee")] { try place.keychain(["set", "-i", "Imported", key], input: value, environment: other) }
                    try place.keychain(["export", place.secrets + "/items.skcx"], environment: other)
                },
                arguments: { ["import", $0.secrets + "/items.skcx"] },
                environment: { ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": $0.secret("archive", archivePassphrase)] }),
            PowerLossOperation(
                name: "export", prepare: { try $0.vaultWithItems() }, arguments: { ["export", $0.home + "/items.skcx"] },
                environment: { ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": $0.secret("archive", archivePassphrase)] }, archives: ["home/items.skcx"]),
            PowerLossOperation(
                name: "set", prepare: { try $0.vaultWithItems() }, arguments: { _ in ["set", "-i", "PowerLoss", "b"] }, input: "bravo, changed"),
            PowerLossOperation(name: "remove", prepare: { try $0.vaultWithItems() }, arguments: { _ in ["remove", "-i", "PowerLoss", "a"] }),
            PowerLossOperation(
                name: "backup",
                prepare: { place in
                    try place.vaultWithItems()
                    mkdir(place.home + "/backups", 0o700)
                },
                arguments: { ["backup", $0.home + "/backups/copy.keychain"] }, watched: [PowerLossPlace.vault, "home/backups/copy.keychain"]),
            PowerLossOperation(
                name: "recover", prepare: { try $0.vaultWithItems() }, arguments: { ["recover", $0.home + "/recovered.keychain"] },
                watched: [PowerLossPlace.vault, "home/recovered.keychain"], intermediates: ["home/recovered.keychain": [.emptyVault]]),
        ]
        if let fixtures {
            let copyFixture: (String, PowerLossPlace) throws -> Void = { name, place in
                try FileManager.default.createDirectory(atPath: place.vaultDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                for suffix in ["", ".key"] where FileManager.default.fileExists(atPath: fixtures + "/\(name).keychain" + suffix) {
                    try FileManager.default.copyItem(atPath: fixtures + "/\(name).keychain" + suffix, toPath: place.vaultPath + suffix)
                    chmod(place.vaultPath + suffix, 0o600)
                }
                try FileManager.default.copyItem(atPath: fixtures + "/machine-id", toPath: place.secrets + "/machine-id")
            }
            operations.insert(
                contentsOf: [
                    PowerLossOperation(
                        name: "format-2 upgrade (key file, by a write)", prepare: { try copyFixture("keyfile", $0) },
                        arguments: { _ in ["set", "-i", "PowerLoss", "after-upgrade"] }, input: "upgraded",
                        machineIdentityFile: { $0.secrets + "/machine-id" }, upgrades: true),
                    PowerLossOperation(
                        name: "format-2 upgrade (passphrase, by an unlock)", prepare: { try copyFixture("passphrase", $0) },
                        arguments: { _ in ["unlock", "--timeout", "0"] },
                        environment: { ["KEYCHAIN_PASSPHRASE_FILE": $0.secret("fixture", "fixture-passphrase")] },
                        passphrases: ["fixture-passphrase"], machineIdentityFile: { $0.secrets + "/machine-id" }, upgrades: true, quickBudget: 15),
                ], at: 7)
        }
        return operations
    }
}
