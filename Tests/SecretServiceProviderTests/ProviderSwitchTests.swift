import Foundation
import KeychainCore
import KeychainServe
import KeychainTestSupport
import Testing

/// Switching providers: every item of a real gnome-keyring (on a private bus, filled by
/// `secret-tool`) into the vault with `keychain migrate --foreign`, then served by `keychain
/// serve` on a fresh bus; and back into a fresh gnome-keyring.
@Suite(
    "switching between gnome-keyring and keychain serve",
    .enabled(if: PrivateSecretService.unavailableReason == nil, "\(PrivateSecretService.unavailableReason ?? "")"),
    .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct ProviderSwitchTests {
    /// A home for the vault (no provider started on its bus yet), and the gnome-keyring.
    struct Switch {
        let keyring: PrivateSecretService
        let served: ServedVault

        init() throws {
            keyring = try PrivateSecretService()
            served = try ServedVault(serving: false)
        }

        /// The vault's home, with gnome-keyring's bus.
        var environment: [String: String] { served.environment.merging(["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress]) { $1 } }

        func keychain(_ arguments: [String]) throws -> CommandResult {
            try Subprocess.run(KeychainExecutable.path, arguments, environment: environment)
        }

        /// `secret-tool` against gnome-keyring.
        func secretTool(_ arguments: [String], input: String = "") throws -> CommandResult {
            try Subprocess.run("/usr/bin/secret-tool", arguments, environment: environment, input: Data(input.utf8))
        }

        func store(_ label: String, _ attributes: [String], secret: String, collection: String? = nil) throws {
            let stored = try secretTool(["store", "--label=\(label)"] + (collection.map { ["--collection=\($0)"] } ?? []) + attributes, input: secret)
            #expect(stored.status == 0, "\(stored.stderr)")
        }

        /// Every vault row, as group/service/account and the value of secret rows: what "exactly as it was" compares.
        func vaultRows() throws -> [String] {
            guard FileManager.default.fileExists(atPath: served.vaultPath) else { return [] }
            let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath)))
            let rows = (try? vault.copyMatching(Query(.genericPassword))) ?? []
            return try rows.map { row in
                let a = row.attributes
                var value = ""
                if a.accessGroup == "org.freedesktop.secrets.secret" {
                    let read = try vault.copyMatching(
                        Query(.genericPassword, attributes: Attributes(service: a.service, account: a.account, accessGroup: a.accessGroup, synchronizable: false), returnData: true)
                    )
                    value = read.first?.value.map { String(decoding: $0.withUnsafeBytes { Data($0) }, as: UTF8.self) } ?? ""
                }
                return "\(a.accessGroup ?? "")|\(a.service ?? "")|\(a.account ?? "")|\(a.label ?? "")|\(value)"
            }.sorted()
        }
    }

    /// A second collection in gnome-keyring, made without a prompt through its own
    /// `CreateWithMasterPassword` (what its unlock screen uses), with Python's jeepney.
    static func createKeyringCollection(_ label: String, on keyring: PrivateSecretService) throws -> String {
        let script = """
            import sys, secretstorage
            from jeepney import new_method_call, DBusAddress
            conn = secretstorage.dbus_init()
            service = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
            session = conn.send_and_get_reply(new_method_call(service, 'OpenSession', 'sv', ('plain', ('s', '')))).body[1]
            internal = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets', interface='org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface')
            reply = conn.send_and_get_reply(new_method_call(internal, 'CreateWithMasterPassword', 'a{sv}(oayays)',
                ({'org.freedesktop.Secret.Collection.Label': ('s', sys.argv[1])}, (session, b'', b'collection-password', 'text/plain'))))
            print(reply.body[0])
            """
        let made = try Subprocess.run(
            PythonClient.python, ["-c", script, label], environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": keyring.busAddress])
        #expect(made.status == 0, "\(made.stderr)")
        return made.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How many items the collection at `path` lists (its `Items` property).
    static func itemCount(of path: String, _ environment: [String: String]) throws -> Int {
        let asked = try Subprocess.run(
            "/usr/bin/dbus-send", SecretServiceProperty.get("Items", of: "org.freedesktop.Secret.Collection", at: path), environment: environment)
        return asked.output.components(separatedBy: "object path ").count - 1
    }

    @Test("every item of gnome-keyring moves into the vault with its label, attributes and collection, and keychain serve answers secret-tool with them")
    func movesEverythingAndServesIt() throws {
        let setup = try Switch()
        try setup.store("Deploy token", ["service", "api.example.com", "user", "deploy"], secret: "s3cret-token")
        try setup.store("Mail", ["xdg:schema", "org.gnome.Evolution.Data.Source", "e-source-uid", "1234abcd"], secret: "mail-pw")
        try setup.store("Temporary", ["service", "memory-only"], secret: "gone-with-it", collection: "/org/freedesktop/secrets/aliases/session")
        let withSecondCollection = PythonClient.unavailableReason == nil
        if withSecondCollection {
            let work = try Self.createKeyringCollection("Work Keys", on: setup.keyring)
            try setup.store("VPN", ["service", "vpn.example.com", "user", "alice"], secret: "vpn-pw", collection: work)
        }

        let moved = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stderr.contains("\(withSecondCollection ? 3 : 2) added"), "\(moved.stderr)")
        #expect(moved.stderr.contains("1 item(s) of the memory-only 'session' collection stayed behind"), "\(moved.stderr)")
        // Moved: gone from gnome-keyring; the memory-only item stayed.
        #expect(try setup.secretTool(["lookup", "service", "api.example.com"]).status != 0)
        #expect(try setup.secretTool(["lookup", "e-source-uid", "1234abcd"]).status != 0)
        #expect(try setup.secretTool(["lookup", "service", "memory-only"]).output == "gone-with-it")

        // keychain serve on its own bus serves them, as they were.
        try setup.served.startServing()
        #expect(setup.served.waitForProvider())
        #expect(try setup.served.run("/usr/bin/secret-tool", ["lookup", "service", "api.example.com", "user", "deploy"]).output == "s3cret-token")
        let searched = try setup.served.run("/usr/bin/secret-tool", ["search", "--all", "e-source-uid", "1234abcd"])
        #expect(searched.output.contains("label = Mail"), "\(searched.output)\(searched.stderr)")
        #expect(searched.output.contains("secret = mail-pw"), "\(searched.output)")
        #expect(searched.output.contains("schema = org.gnome.Evolution.Data.Source"), "\(searched.output)")
        let rows = try setup.vaultRows()
        #expect(rows.contains { $0.hasPrefix("org.freedesktop.secrets.secret|login|") && $0.hasSuffix("|mail-pw") }, "\(rows)")
        if withSecondCollection {
            let vpn = try setup.served.run("/usr/bin/secret-tool", ["search", "--all", "service", "vpn.example.com"])
            #expect(vpn.output.contains("label = VPN"), "\(vpn.output)")
            #expect(vpn.output.contains("secret = vpn-pw"), "\(vpn.output)")
            #expect(rows.contains { $0.hasPrefix("org.freedesktop.secrets.secret|workkeys|") && $0.hasSuffix("|vpn-pw") }, "\(rows)")
            #expect(rows.contains { $0.hasPrefix("org.freedesktop.secrets.collection|collections|workkeys|Work Keys|") }, "\(rows)")
        }
        #expect(try setup.served.run("/usr/bin/secret-tool", ["lookup", "service", "memory-only"]).status != 0)
    }

    @Test("an xdg:schema only one side has does not make two items different; different schemas or attributes do")
    func sameItemRule() {
        #expect(ServedItems.isSameItem(["service": "a"], ["service": "a", "xdg:schema": "org.freedesktop.Secret.Generic"]))
        #expect(ServedItems.isSameItem(["service": "a", "xdg:schema": "x"], ["service": "a", "xdg:schema": "x"]))
        #expect(!ServedItems.isSameItem(["service": "a", "xdg:schema": "x"], ["service": "a", "xdg:schema": "y"]))
        #expect(!ServedItems.isSameItem(["service": "a"], ["service": "a", "user": "b"]))
        #expect(ServedItems.isSameItem([:], [:]))
    }

    @Test(
        "a binary secret keeps its bytes and its content type from one keychain serve (another vault's) into this vault, and its bytes back into gnome-keyring",
        .enabled(if: PythonClient.unavailableReason == nil, "\(PythonClient.unavailableReason ?? "")"))
    func binarySecretAndContentType() throws {
        let python = { (bus: String, code: String) throws -> CommandResult in
            try Subprocess.run(
                PythonClient.python, ["-c", "import secretstorage; c = secretstorage.dbus_init(); " + code],
                environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": bus])
        }
        let read = "i = next(secretstorage.search_items(c, {'kind': 'binary'})); print(i.get_secret().hex(), i.get_secret_content_type(), i.get_label())"
        // The old provider: keychain serve of another vault (gnome-keyring keeps no content type: it answers text/plain).
        let old = try ServedVault()
        let stored = try python(
            old.busAddress,
            "secretstorage.get_default_collection(c).create_item('bin', {'kind': 'binary'}, bytes([0, 255, 16, 10]), content_type='application/x-test')")
        #expect(stored.status == 0, "\(stored.stderr)")
        let new = try ServedVault(serving: false)
        let moved = try Subprocess.run(
            KeychainExecutable.path, ["migrate", "--foreign", "--from", "secret-service", "--to", "vault"],
            environment: new.environment.merging(["DBUS_SESSION_BUS_ADDRESS": old.busAddress]) { $1 })
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(try python(old.busAddress, read).status != 0)
        try new.startServing()
        #expect(new.waitForProvider())
        let served = try python(new.busAddress, read)
        #expect(served.output == "00ff100a application/x-test bin\n", "\(served.output)\(served.stderr)")
        new.stopServing()

        let keyring = try PrivateSecretService()
        let back = try Subprocess.run(
            KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"],
            environment: new.environment.merging(["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress]) { $1 })
        #expect(back.status == 0, "\(back.stderr)")
        let again = try python(keyring.busAddress, read)
        #expect(again.output.hasPrefix("00ff100a "), "\(again.output)\(again.stderr)")
    }

    @Test(
        "with --keep-source the items stay in gnome-keyring too; a second run with --conflict keep leaves the vault as it was, keeps a changed item in both places and takes only the unchanged copy out of gnome-keyring"
    )
    func keepSourceAndIdempotentKeep() throws {
        let setup = try Switch()
        try setup.store("one", ["app", "demo", "n", "1"], secret: "first")
        try setup.store("two", ["app", "demo", "n", "2"], secret: "second")
        let copied = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--keep-source"])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stderr.contains("copied 2 item(s)"), "\(copied.stderr)")
        #expect(try setup.secretTool(["lookup", "n", "1"]).output == "first")
        #expect(try setup.secretTool(["lookup", "n", "2"]).output == "second")
        let before = try setup.vaultRows()
        #expect(before.filter { $0.hasPrefix("org.freedesktop.secrets.secret|") }.count == 2)
        try setup.store("two", ["app", "demo", "n", "2"], secret: "second-changed")

        let again = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--conflict", "keep"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("0 added, 0 replaced, 1 kept"), "\(again.stderr)")
        #expect(again.stderr.contains("1 item(s) were in the vault already"), "\(again.stderr)")
        #expect(try setup.vaultRows() == before)
        // A kept item is not the vault's to delete from the source; the vault's exact copy is.
        #expect(try setup.secretTool(["lookup", "n", "2"]).output == "second-changed")
        #expect(try setup.secretTool(["lookup", "n", "1"]).status != 0)
    }

    @Test("a conflict under refuse (the default) writes nothing and names the count; replace takes the provider's secret")
    func conflictRefusesThenReplaces() throws {
        let setup = try Switch()
        try setup.store("token", ["service", "ci"], secret: "old")
        #expect(try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--keep-source"]).status == 0)
        try setup.store("token", ["service", "ci"], secret: "new")
        try setup.store("other", ["service", "cd"], secret: "more")
        let before = try setup.vaultRows()
        let refused = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("1 item(s) have exactly the attributes"), "\(refused.stderr)")
        #expect(try setup.vaultRows() == before)
        #expect(try setup.secretTool(["lookup", "service", "cd"]).output == "more")

        let replaced = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--conflict", "replace"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stderr.contains("1 added, 1 replaced"), "\(replaced.stderr)")
        let secrets = try setup.vaultRows().filter { $0.hasPrefix("org.freedesktop.secrets.secret|") }
        #expect(secrets.count == 2)
        #expect(secrets.contains { $0.hasSuffix("|new") } && secrets.contains { $0.hasSuffix("|more") }, "\(secrets)")
    }

    @Test(
        "an item too large for the vault fails the whole migration: the vault is exactly as it was and gnome-keyring keeps everything",
        .enabled(if: PythonClient.unavailableReason == nil, "\(PythonClient.unavailableReason ?? "")"))
    func tooLargeMovesNothing() throws {
        let setup = try Switch()
        try setup.store("first", ["service", "before"], secret: "was-there")
        #expect(try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"]).status == 0)
        let before = try setup.vaultRows()
        try setup.store("small", ["service", "small"], secret: "fits")
        // secret-tool reads at most 8 KiB: the large one goes in through secretstorage.
        let huge = try Subprocess.run(
            PythonClient.python,
            [
                "-c",
                "import secretstorage; c = secretstorage.dbus_init(); secretstorage.get_default_collection(c).create_item('huge', {'service': 'huge'}, b'x' * ((1 << 20) + 1))",
            ], environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": setup.keyring.busAddress])
        #expect(huge.status == 0, "\(huge.stderr)")
        let failed = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"])
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("Nothing was moved"), "\(failed.stderr)")
        #expect(try setup.vaultRows() == before)
        #expect(try setup.secretTool(["lookup", "service", "small"]).output == "fits")
        #expect(try setup.secretTool(["search", "service", "huge"]).output.contains("label = huge"))
    }

    @Test("a locked collection fails with status 3 moving nothing, unless --skip-locked")
    func lockedCollection() throws {
        let setup = try Switch()
        try setup.store("locked", ["service", "behind-lock"], secret: "hidden")
        try setup.keyring.lockDefaultCollection()
        let before = try setup.vaultRows()
        let failed = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"])
        #expect(failed.status == 3, "\(failed.stderr)")
        #expect(failed.stderr.contains("locked"), "\(failed.stderr)")
        #expect(try setup.vaultRows() == before)
        let skipped = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--skip-locked"])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(skipped.stderr.contains("1 item(s) of 1 locked collection(s) stayed behind"), "\(skipped.stderr)")
        #expect(try setup.vaultRows().filter { $0.hasPrefix("org.freedesktop.secrets.secret|") }.isEmpty)
    }

    @Test("back: the served items go into a fresh gnome-keyring with their labels, attributes and secrets, and leave the vault")
    func movesBackIntoGnomeKeyring() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=Deploy token", "service", "api.example.com", "user", "deploy"], input: "s3cret").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=git", "protocol", "https", "host", "example.org"], input: "git-pw").status == 0)
        // An item of the synchronized collection belongs to every machine of its group: it stays, and the command says so.
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--collection=sync", "--label=shared", "team", "ops"], input: "shared-pw").status == 0)
        served.stopServing()
        let keyring = try PrivateSecretService()
        let environment = served.environment.merging(["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress]) { $1 }
        let back = try Subprocess.run(KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"], environment: environment)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stderr.contains("moved 2 item(s)"), "\(back.stderr)")
        #expect(back.stderr.contains("1 item(s) of the synchronized collection stayed in the vault"), "\(back.stderr)")
        let searched = try Subprocess.run("/usr/bin/secret-tool", ["search", "--all", "user", "deploy"], environment: environment)
        #expect(searched.output.contains("label = Deploy token"), "\(searched.output)\(searched.stderr)")
        #expect(searched.output.contains("secret = s3cret"), "\(searched.output)")
        #expect(searched.stderr.contains("attribute.service = api.example.com"), "\(searched.stderr)")
        #expect(try Self.itemCount(of: "/org/freedesktop/secrets/collection/login", environment) == 2)
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "host", "example.org"], environment: environment).output == "git-pw")
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath)))
        let left = (try? vault.copyMatching(Query(.genericPassword, attributes: Attributes(accessGroup: "org.freedesktop.secrets.item", synchronizable: false)))) ?? []
        #expect(left.isEmpty)
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "team", "ops"], environment: environment).status != 0)
    }

    @Test(
        "back: a collection the provider cannot create fails the move, deletes what it created there, and leaves the vault as it was",
        .enabled(if: PythonClient.unavailableReason == nil, "\(PythonClient.unavailableReason ?? "")"))
    func backUndoesWhenACollectionCannotBeMade() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=login item", "service", "in-login"], input: "one").status == 0)
        let made = try served.run(
            PythonClient.python,
            [
                "-c",
                "import secretstorage; c = secretstorage.dbus_init(); col = secretstorage.create_collection(c, 'Work Keys'); col.create_item('work item', {'service': 'in-work'}, b'two')",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        served.stopServing()
        let keyring = try PrivateSecretService()
        let environment = served.environment.merging(["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress, "KEYCHAIN_TIMEOUT": "2"]) { $1 }
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath)))
        let before = (try? vault.copyMatching(Query(.genericPassword)))?.count ?? 0
        let back = try Subprocess.run(KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"], environment: environment)
        #expect(back.status != 0)
        #expect(back.stderr.contains("did not create a collection labelled 'Work Keys'"), "\(back.stderr)")
        #expect(back.stderr.contains("deleted again; the vault is unchanged"), "\(back.stderr)")
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "service", "in-login"], environment: environment).status != 0)
        #expect(((try? vault.copyMatching(Query(.genericPassword)))?.count ?? 0) == before)

        // With a collection of that label there, it goes in.
        let work = try Self.createKeyringCollection("Work Keys", on: keyring)
        let again = try Subprocess.run(KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"], environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        let found = try Subprocess.run("/usr/bin/secret-tool", ["search", "--all", "service", "in-work"], environment: environment)
        #expect(try Self.itemCount(of: work, environment) == 1)
        #expect(found.output.contains("secret = two"), "\(found.output)")
    }

    @Test(
        "back: an item the provider's collection has with exactly the same attributes is refused by default (nothing written anywhere); keep leaves both sides' items; replace takes the vault's"
    )
    func backConflicts() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=vault's", "service", "same"], input: "from-vault").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=other", "service", "different"], input: "other").status == 0)
        served.stopServing()
        let keyring = try PrivateSecretService()
        let environment = served.environment.merging(["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress]) { $1 }
        let stored = try Subprocess.run("/usr/bin/secret-tool", ["store", "--label=keyring's", "service", "same"], environment: environment, input: Data("from-keyring".utf8))
        #expect(stored.status == 0, "\(stored.stderr)")
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath)))
        let before = (try? vault.copyMatching(Query(.genericPassword)))?.count ?? 0

        let refused = try Subprocess.run(KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"], environment: environment)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("1 item(s) have exactly the attributes"), "\(refused.stderr)")
        #expect(try Self.itemCount(of: "/org/freedesktop/secrets/collection/login", environment) == 1)
        #expect(((try? vault.copyMatching(Query(.genericPassword)))?.count ?? 0) == before)

        let kept = try Subprocess.run(
            KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service", "--conflict", "keep"], environment: environment)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stderr.contains("1 added, 0 replaced, 1 kept"), "\(kept.stderr)")
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "service", "same"], environment: environment).output == "from-keyring")
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "service", "different"], environment: environment).output == "other")
        let left = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(accessGroup: "org.freedesktop.secrets.secret", synchronizable: false), returnData: true))
        #expect(left.map { $0.value } == [SecretBytes(utf8: "from-vault")])

        // replace: the vault's item takes the place of the provider's.
        let replaced = try Subprocess.run(
            KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service", "--conflict", "replace"], environment: environment)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stderr.contains("0 added, 1 replaced, 0 kept"), "\(replaced.stderr)")
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "service", "same"], environment: environment).output == "from-vault")
        #expect(try Self.itemCount(of: "/org/freedesktop/secrets/collection/login", environment) == 2)
        #expect((try? vault.copyMatching(Query(.genericPassword, attributes: Attributes(accessGroup: "org.freedesktop.secrets.secret", synchronizable: false)))) == nil)
    }

    /// The process id of the name's owner on the bus of `environment`, or nil.
    static func owner(_ environment: [String: String]) throws -> pid_t? {
        let asked = try Subprocess.run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"],
            environment: environment)
        guard asked.status == 0 else { return nil }
        return asked.output.split(separator: " ").last.flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Waits (a bounded number of polls) until `pid` owns the name; whether it does.
    static func waitForOwner(_ pid: pid_t, _ environment: [String: String]) throws -> Bool {
        for _ in 0..<400 {
            if try owner(environment) == pid { return true }
            usleep(25_000)
        }
        return false
    }

    @Test("the switch in the documented order: migrate, stop gnome-keyring, keychain serve; back: start gnome-keyring (it waits for the name), stop keychain serve, migrate back")
    func switchInOrderAndBack() throws {
        let setup = try Switch()
        try setup.store("Deploy token", ["service", "api.example.com"], secret: "s3cret")
        #expect(try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"]).status == 0)
        // Stopped here, it is not the fixture's to stop again (its process id may be another's by then).
        kill(setup.keyring.keyringPID, SIGTERM)
        let pidFile = setup.keyring.directory + "/keyring.pid"
        try "".write(toFile: pidFile, atomically: true, encoding: .utf8)
        for _ in 0..<400 where try Self.owner(setup.environment) != nil { usleep(25_000) }
        let serving = try setup.served.startServing([], environment: ["DBUS_SESSION_BUS_ADDRESS": setup.keyring.busAddress])
        #expect(try Self.waitForOwner(serving, setup.environment), "\(setup.served.serveErrors)")
        #expect(try setup.secretTool(["lookup", "service", "api.example.com"]).output == "s3cret")

        // Back: gnome-keyring started again queues for the name, which it gets when keychain serve stops.
        let home = setup.keyring.directory
        let started = try Subprocess.run(
            "/usr/bin/gnome-keyring-daemon", ["--unlock", "--components=secrets", "--daemonize"],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": home + "/home", "XDG_RUNTIME_DIR": home + "/run", "XDG_DATA_HOME": home + "/data",
                "DBUS_SESSION_BUS_ADDRESS": setup.keyring.busAddress,
            ], input: Data("test-password".utf8))
        #expect(started.status == 0, "\(started.stderr)")
        #expect(try Self.owner(setup.environment) == serving)
        setup.served.stopServing()
        var keyring: pid_t?
        for _ in 0..<400 where keyring == nil {
            keyring = try Self.owner(setup.environment)
            usleep(25_000)
        }
        // The fixture stops the gnome-keyring started here.
        if let keyring { try "\(keyring)\n".write(toFile: pidFile, atomically: true, encoding: .utf8) }
        #expect(keyring != nil && keyring != serving)
        let back = try setup.keychain(["migrate", "--foreign", "--from", "vault", "--to", "secret-service"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try setup.secretTool(["lookup", "service", "api.example.com"]).output == "s3cret")
        #expect(try setup.vaultRows().filter { $0.hasPrefix("org.freedesktop.secrets.secret|") }.isEmpty)
    }

    @Test("keychain serve --replace against gnome-keyring, which never lets the name go, says so and how to switch, and gnome-keyring keeps serving")
    func replaceRefusedByGnomeKeyringSaysHow() throws {
        let setup = try Switch()
        try setup.store("Deploy token", ["service", "api.example.com"], secret: "s3cret")
        let replacing = try setup.keychain(["serve", "--replace"])
        #expect(replacing.status != 0)
        #expect(replacing.stderr.contains("does not let another replace it"), "\(replacing.stderr)")
        #expect(replacing.stderr.contains("stop it first") && replacing.stderr.contains("keychain migrate --foreign"), "\(replacing.stderr)")
        #expect(try setup.secretTool(["lookup", "service", "api.example.com"]).output == "s3cret")
    }

    @Test("back is refused while keychain serve of this same vault owns the name, and nothing moves")
    func refusesItsOwnVault() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "self"], input: "mine").status == 0)
        let refused = try KeychainExecutableOnBus.run(["migrate", "--foreign", "--from", "vault", "--to", "secret-service"], served)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("serving this same vault"), "\(refused.stderr)")
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "self"]).output == "mine")
        let into = try KeychainExecutableOnBus.run(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"], served)
        #expect(into.status != 0)
        #expect(into.stderr.contains("serving this same vault"), "\(into.stderr)")
    }
}
