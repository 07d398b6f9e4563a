import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// `secret-tool` (libsecret, with its preferred Diffie-Hellman session) against `keychain serve`.
@Suite("keychain serve with secret-tool", .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct SecretToolTests {
    @Test("secret-tool stores, looks up, searches and clears an item, and the item lives in the vault, sealed")
    func storeLookupSearchClear() throws {
        let served = try ServedVault()
        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=Deploy token", "service", "api.example.com", "user", "deploy"], input: "s3cret-token")
        #expect(stored.status == 0, "\(stored.stderr) \(served.serveErrors)")
        let looked = try served.run("/usr/bin/secret-tool", ["lookup", "service", "api.example.com", "user", "deploy"])
        #expect(looked.status == 0)
        #expect(looked.output == "s3cret-token")
        // One attribute of two finds it; a value it lacks does not.
        let searched = try served.run("/usr/bin/secret-tool", ["search", "--all", "user", "deploy"])
        #expect(searched.output.contains("label = Deploy token"), "\(searched.output)\(searched.stderr)")
        // secret-tool prints attributes on standard error.
        #expect(searched.stderr.contains("attribute.service = api.example.com"), "\(searched.stderr)")
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "user", "someone-else"]).status == 1)

        // In the vault: a whenUnlocked secret row, and no attribute or label in the file in clear.
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath)))
        let secrets = try vault.copyMatching(
            Query(.genericPassword, attributes: Attributes(service: "login", accessGroup: "org.freedesktop.secrets.secret", synchronizable: false), returnData: true))
        #expect(secrets.count == 1)
        #expect(secrets.first?.attributes.accessibility == .whenUnlocked)
        #expect(secrets.first?.value == SecretBytes(utf8: "s3cret-token"))
        let file = try Data(contentsOf: URL(fileURLWithPath: served.vaultPath))
        for clear in ["api.example.com", "Deploy token", "s3cret-token", "deploy"] {
            #expect(file.range(of: Data(clear.utf8)) == nil, "\(clear) is in the vault file in clear")
        }

        let cleared = try served.run("/usr/bin/secret-tool", ["clear", "service", "api.example.com"])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "api.example.com"]).status == 1)
        // Every row of the item went with it: the secret, the record, the index rows and its
        // pairs' id lists. What stays is the collection's row that says its items are listed.
        let left = try vault.copyMatching(Query(.genericPassword))
        #expect(left.map { "\($0.attributes.accessGroup ?? "")/\($0.attributes.account ?? "")" } == ["org.freedesktop.secrets.tally/complete"])
    }

    @Test("keychain status counts each item other programs stored once, not the rows it is kept in")
    func statusCountsItems() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=Deploy token", "service", "api.example.com", "user", "deploy"], input: "s3cret").status == 0)
        #expect(try served.run(KeychainExecutable.path, ["set", "-i", "Druidia", "Skroob"], input: "12345").status == 0)
        let text = try served.run(KeychainExecutable.path, ["status"])
        #expect(text.output.contains("items:             2\n"), "one served item and one Valet key: \(text.output)")
        let json = try served.run(KeychainExecutable.path, ["status", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["items"] as? Int == 2 && (object["rows"] as? Int ?? 0) > 2, "\(json.output)")
    }

    @Test("keychain list shows each item other programs stored as one line (collection/id, label, attributes), never the rows it is kept in")
    func listShowsServedItems() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=Deploy token", "service", "api.example.com", "user", "deploy"], input: "s3cret").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=Mail", "service", "mail.example.com"], input: "m41l").status == 0)
        let listed = try served.run(KeychainExecutable.path, ["list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.output.split(separator: "\n").map(String.init).sorted()
        #expect(lines.count == 2, "\(listed.output)")
        let deploy = try #require(lines.first { $0.contains("label=Deploy token") })
        let fields = deploy.split(separator: "\t").map(String.init)
        #expect(fields.first == "secret-service" && fields.contains("service=api.example.com") && fields.contains("user=deploy"), "\(deploy)")
        #expect(!listed.output.contains("s3cret") && !listed.output.contains("m41l"))

        // The line names the item as keychain get reads it.
        let place = fields[1].split(separator: "/").map(String.init)
        #expect(place.count == 2 && place[0] == "login")
        let got = try served.run(
            KeychainExecutable.path, ["get", "--access-group", "org.freedesktop.secrets.secret", "--service", place[0], "--account", place[1]])
        #expect(got.output == "s3cret\n", "\(got.stderr)")

        let json = try served.run(KeychainExecutable.path, ["list", "--json"])
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(objects.count == 2)
        #expect(objects.allSatisfy { $0["class"] as? String == "secret-service" && $0["collection"] as? String == "login" })
        #expect(objects.contains { ($0["attributes"] as? [String: String]) == ["service": "mail.example.com"] && $0["label"] as? String == "Mail" })

        // Asked for by access group, the rows themselves still list.
        let rows = try served.run(KeychainExecutable.path, ["list", "--access-group", "org.freedesktop.secrets.attribute"])
        #expect(rows.output.split(separator: "\n").count == 3, "\(rows.output)")
    }

    @Test("an item stored through keychain serve is there after the daemon restarts (the login collection is the vault)")
    func persistsAcrossRestart() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=git", "protocol", "https", "host", "example.org"], input: "pw").status == 0)
        served.stopServing()
        try served.startServing()
        #expect(served.waitForProvider())
        let looked = try served.run("/usr/bin/secret-tool", ["lookup", "host", "example.org"])
        #expect(looked.output == "pw", "\(looked.stderr)")
    }

    @Test("storing again with the same attributes replaces the item's secret instead of adding a second item")
    func storeReplaces() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=one", "app", "demo"], input: "first").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=two", "app", "demo"], input: "second").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "app", "demo"]).output == "second")
        let searched = try served.run("/usr/bin/secret-tool", ["search", "--all", "app", "demo"])
        #expect(searched.output.components(separatedBy: "label = ").count == 2, "\(searched.output)")
    }

    @Test("keychain serve refuses to start while another provider (here this vault's own) owns the name, and --replace takes it over")
    func refusesAnotherProviderUnlessReplace() throws {
        let served = try ServedVault()
        let first = served.servePID
        let second = try KeychainExecutableOnBus.run(["serve"], served)
        #expect(second.status != 0)
        // The owner, as the bus says, is keychain serve of this same vault: the message names it.
        #expect(second.stderr.contains("keychain serve of this vault (process \(first)) already serves"), "\(second.stderr)")
        #expect(kill(first, 0) == 0, "the running provider stopped")

        // --replace: the new one takes the name, the old one says why and exits 0.
        let replacing = try served.startServing(["--replace"])
        let status = Subprocess.wait(for: first)
        #expect(status == 0)
        #expect(served.waitForProvider())
        #expect(kill(replacing, 0) == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=x", "k", "v"], input: "after").status == 0)
    }
}

/// Runs `keychain ARGS` to completion on a served vault's bus.
enum KeychainExecutableOnBus {
    static func run(_ arguments: [String], _ served: ServedVault) throws -> CommandResult {
        try Subprocess.run(KeychainExecutable.path, arguments, environment: served.environment)
    }
}

/// `keychain serve --install`: started by the bus at the first call.
@Suite("keychain serve started on demand", .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct ActivationTests {
    @Test(
        "after keychain serve --install from the build folder, the first secret-tool call starts a stable copy of it through D-Bus activation, serving the default vault"
    )
    func installedProviderStartsOnDemand() throws {
        let served = try ServedVault(serving: false)
        let installed = try KeychainExecutableOnBus.run(["serve", "--install"], served)
        #expect(installed.status == 0, "\(installed.stderr)")
        let activation = try String(contentsOfFile: served.directory.path + "/data/dbus-1/services/org.freedesktop.secrets.service", encoding: .utf8)
        #expect(activation.contains("Name=org.freedesktop.secrets"))
        // Run from the build folder, it names a copy in the user's data directory, which stays.
        let copy = served.directory.path + "/data/keychain/serve/keychain"
        #expect(installed.stderr.contains("copied it to \(copy)"), "\(installed.stderr)")
        #expect(FileManager.default.isExecutableFile(atPath: copy))
        #expect(activation.contains("Exec=\"\(copy)\" serve\n"), "\(activation)")
        let unit = try String(contentsOfFile: served.directory.path + "/config/systemd/user/keychain-serve.service", encoding: .utf8)
        #expect(unit.contains("BusName=org.freedesktop.secrets"))
        // systemd starting the unit for the bus tells it nothing of the bus: the unit names its idle exit.
        #expect(unit.contains("ExecStart=\"\(copy)\" serve --idle-exit 600\n"), "\(unit)")

        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=on demand", "service", "activated"], input: "started")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "activated"]).output == "started")
        #expect(FileManager.default.fileExists(atPath: served.vaultPath))
    }
}

/// The project's own Secret Service store (libsecret, through `keychain --backend secret-service`)
/// as a client of `keychain serve`, each on a vault of its own.
@Suite("The Secret Service store against keychain serve", .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct SecretServiceStoreOnServeTests {
    @Test("keychain --backend secret-service sets, reads, overwrites, lists and removes a Valet's item in the served vault")
    func storeThroughServe() throws {
        let served = try ServedVault()
        // The client's own vault is elsewhere: only the served one may receive the item.
        let client = served.environment.merging(["XDG_DATA_HOME": served.directory.path + "/client", "KEYCHAIN_BACKEND": "secret-service"]) { $1 }
        func keychain(_ arguments: [String], _ input: String = "") throws -> CommandResult {
            try Subprocess.run(KeychainExecutable.path, arguments, environment: client, input: Data(input.utf8))
        }
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], "12345").status == 0)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).output == "12345\n")
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], "67890").status == 0)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).output == "67890\n")
        #expect(try keychain(["list", "--identifier", "Druidia"]).output == "Skroob\n")
        #expect(try keychain(["remove", "--identifier", "Druidia", "Skroob"]).status == 0)
        #expect(try keychain(["get", "--identifier", "Druidia", "Skroob"]).status == 1)
        #expect(!FileManager.default.fileExists(atPath: served.directory.path + "/client/keychain/default.keychain"))
        #expect(FileManager.default.fileExists(atPath: served.vaultPath))
    }
}

/// Generic D-Bus tools see the interfaces the daemon answers.
@Suite("keychain serve's introspection", .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct IntrospectionTests {
    @Test("Introspect describes the service's and a collection's methods, properties and signals")
    func introspect() throws {
        let served = try ServedVault()
        func introspect(_ path: String) throws -> String {
            try served.run(
                "/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.secrets", path, "org.freedesktop.DBus.Introspectable.Introspect"]
            ).output
        }
        let service = try introspect("/org/freedesktop/secrets")
        #expect(service.contains("<interface name=\"org.freedesktop.Secret.Service\">"), "\(service)")
        let openSession = ["s", "v"].map { "<arg type=\"\($0)\" direction=\"in\"/>" } + ["v", "o"].map { "<arg type=\"\($0)\" direction=\"out\"/>" }
        #expect(service.contains("<method name=\"OpenSession\">" + openSession.joined() + "</method>"))
        let collection = try introspect("/org/freedesktop/secrets/aliases/default")
        let createItem = ["a{sv}", "(oayays)", "b"].map { "<arg type=\"\($0)\" direction=\"in\"/>" }.joined()
        #expect(collection.contains("<method name=\"CreateItem\">" + createItem))
        #expect(collection.contains("<property name=\"Label\" type=\"s\" access=\"readwrite\"/>"))
        #expect(collection.contains("<signal name=\"ItemCreated\"><arg type=\"o\"/></signal>"))
    }
}
