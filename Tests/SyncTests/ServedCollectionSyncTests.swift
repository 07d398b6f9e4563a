import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// `keychain serve`'s synchronized collection (`sync`) between two machines: each a home whose
/// vault is in one sync group on the test's etcd cluster, each serving its vault on a private
/// bus of its own; `secret-tool` is the client on both. No sync agent runs: the daemons sync.
@Suite(
    "keychain serve's sync collection through etcd", .serialized,
    .enabled(
        if: EtcdCluster.unavailableReason == nil && ServedVault.unavailableReason == nil,
        "\(EtcdCluster.unavailableReason ?? ServedVault.unavailableReason ?? "")"))
struct ServedCollectionSyncTests {
    let cluster: EtcdCluster
    static let pythonMissing = "needs KEYCHAIN_TEST_PYTHON naming a Python with secretstorage (python3 -m venv v && v/bin/pip install secretstorage)"
    /// A Python with secretstorage (`KEYCHAIN_TEST_PYTHON`), or nil.
    static let python: String? = {
        guard let python = ProcessInfo.processInfo.environment["KEYCHAIN_TEST_PYTHON"], FileManager.default.isExecutableFile(atPath: python),
            (try? Subprocess.run(python, ["-c", "import secretstorage"], environment: ["PATH": "/usr/bin:/bin"]))?.status == 0
        else { return nil }
        return python
    }()

    init() throws { cluster = try EtcdCluster() }

    @Test(
        "an item stored on one machine's sync collection is found on the other with its label, attributes and secret; a change and a delete travel back; a login item stays home"
    )
    func itemTravelsBothWays() throws {
        let (alpha, beta) = try pair()
        let stored = try alpha.secretTool(
            ["store", "--label=Deploy token", "--collection=sync", "service", "api.example.com", "user", "deploy", "team", "ops"], input: "s3cret-token")
        #expect(stored.status == 0, "\(stored.stderr) \(alpha.served.serveErrors)")
        #expect(try alpha.secretTool(["store", "--label=Local", "service", "local-only"], input: "stays-here").status == 0)

        #expect(try eventually { try beta.lookup(["service", "api.example.com", "user", "deploy"]) == "s3cret-token" }, "\(beta.served.serveErrors)")
        let searched = try beta.secretTool(["search", "--all", "user", "deploy"])
        #expect(searched.output.contains("label = Deploy token"), "\(searched.output)\(searched.stderr)")
        // In beta's sync collection (Collection.Items), under the id it has on alpha.
        let alphaItems = try alpha.items(of: "sync")
        #expect(alphaItems.count == 1)
        #expect(try beta.items(of: "sync") == alphaItems)
        #expect(alphaItems.allSatisfy { searched.output.contains("[/\($0)]") }, "\(searched.output)")
        #expect(try beta.items(of: "login").isEmpty)
        #expect(searched.output.contains("secret = s3cret-token"), "\(searched.output)")
        for attribute in ["attribute.service = api.example.com", "attribute.user = deploy", "attribute.team = ops"] {
            #expect(searched.stderr.contains(attribute), "\(searched.stderr)")
        }
        // The login item went into the outbox of no sync group: it was written before the
        // synchronized one, which has arrived.
        #expect(try beta.lookup(["service", "local-only"]) == nil)

        let changed = try beta.secretTool(
            ["store", "--label=Deploy token (rotated)", "--collection=sync", "service", "api.example.com", "user", "deploy", "team", "ops"], input: "rotated")
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try eventually { try alpha.lookup(["service", "api.example.com"]) == "rotated" }, "\(alpha.served.serveErrors)")
        let relabelled = try alpha.secretTool(["search", "--all", "team", "ops"])
        #expect(relabelled.output.contains("label = Deploy token (rotated)"), "\(relabelled.output)")
        #expect(relabelled.output.components(separatedBy: "\n[/").count == 1 && relabelled.output.hasPrefix("[/"), "one item: \(relabelled.output)")
        #expect(try alpha.items(of: "sync") == alphaItems)

        #expect(try beta.secretTool(["clear", "service", "api.example.com"]).status == 0)
        #expect(try eventually { try alpha.lookup(["service", "api.example.com"]) == nil })
        #expect(try alpha.items(of: "sync").isEmpty)
        #expect(try alpha.lookup(["service", "local-only"]) == "stays-here")
    }

    @Test(
        "a search on one attribute pair finds the items that arrived by sync beside the machine's own (the id lists of the login collection would miss them); the default alias can name the sync collection"
    )
    func searchFindsArrivedItems() throws {
        let (alpha, beta) = try pair()
        // beta's own item of the pair first, so that any list beta keeps of it names only that one.
        #expect(try beta.secretTool(["store", "--label=Beta's", "--collection=sync", "team", "ops", "host", "beta"], input: "b").status == 0)
        // alpha's clients store in it without naming it: it is their default collection.
        let aliased = try alpha.served.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SetAlias",
                "string:default", "objpath:/org/freedesktop/secrets/collection/sync",
            ])
        #expect(aliased.status == 0, "\(aliased.stderr)")
        #expect(try alpha.secretTool(["store", "--label=Alpha's", "team", "ops", "host", "alpha"], input: "a").status == 0)
        #expect(try eventually { try beta.lookup(["host", "alpha"]) == "a" }, "\(beta.served.serveErrors)")
        let searched = try beta.secretTool(["search", "--all", "team", "ops"])
        #expect(searched.output.contains("label = Alpha's"), "\(searched.output)")
        #expect(searched.output.contains("label = Beta's"), "\(searched.output)")
        #expect(try beta.lookup(["team", "ops", "host", "alpha"]) == "a")
        #expect(try eventually { try alpha.lookup(["team", "ops", "host", "beta"]) == "b" })
    }

    @Test(
        "an attribute dropped on one machine and a relabel on the other, while apart: the later relabel wins with the attribute, which a search on either machine still finds",
        .enabled(if: ServedCollectionSyncTests.python != nil, "\(ServedCollectionSyncTests.pythonMissing)"))
    func concurrentEditsKeepTheWinnerFindable() throws {
        let (alpha, beta) = try pair()
        #expect(try alpha.secretTool(["store", "--label=Shared", "--collection=sync", "team", "ops", "host", "web"], input: "s").status == 0)
        #expect(try eventually { try beta.lookup(["host", "web"]) == "s" }, "\(beta.served.serveErrors)")
        // Apart: no member of the cluster answers; both writes wait in their outboxes.
        for member in 1...3 { try cluster.pause(member) }
        let dropped = try alpha.python("item.set_attributes({'team': 'ops'})")
        #expect(dropped.status == 0, "\(dropped.stderr)")
        usleep(50_000)
        let relabelled = try beta.python("item.set_label('Relabelled')")
        #expect(relabelled.status == 0, "\(relabelled.stderr)")
        for member in 1...3 { try cluster.resume(member) }
        // beta's later record wins on both, with host=web: a search by it finds the item on both.
        let converged = try eventually(seconds: 60) {
            try [alpha, beta].allSatisfy { machine in
                try machine.lookup(["host", "web"]) == "s" && machine.secretTool(["search", "--all", "team", "ops"]).output.contains("label = Relabelled")
            }
        }
        let seen = try alpha.secretTool(["search", "--all", "team", "ops"]).output
        #expect(converged, "alpha: \(seen) \(alpha.served.serveErrors)")
        usleep(2_000_000)
        for machine in [alpha, beta] { #expect(try machine.lookup(["host", "web"]) == "s") }
    }

    @Test(
        "an item deleted on one machine and relabelled later on the other, while apart: the relabel wins with the whole item, secret included, on both",
        .enabled(if: ServedCollectionSyncTests.python != nil, "\(ServedCollectionSyncTests.pythonMissing)"))
    func laterEditWinsOverDelete() throws {
        let (alpha, beta) = try pair()
        #expect(try alpha.secretTool(["store", "--label=Shared", "--collection=sync", "team", "ops", "host", "web"], input: "s").status == 0)
        #expect(try eventually { try beta.lookup(["host", "web"]) == "s" }, "\(beta.served.serveErrors)")
        for member in 1...3 { try cluster.pause(member) }
        #expect(try alpha.secretTool(["clear", "host", "web"]).status == 0)
        usleep(50_000)
        let relabelled = try beta.python("item.set_label('Kept')")
        #expect(relabelled.status == 0, "\(relabelled.stderr)")
        for member in 1...3 { try cluster.resume(member) }
        let converged = try eventually(seconds: 60) {
            try [alpha, beta].allSatisfy { machine in
                try machine.lookup(["host", "web"]) == "s" && machine.secretTool(["search", "--all", "team", "ops"]).output.contains("label = Kept")
            }
        }
        #expect(converged, "\(alpha.served.serveErrors)")
    }

    @Test("while a sync agent keeps the vault in step, what it applies shows through the daemon; once it exits, the daemon keeps it in step")
    func agentHandsOverToTheDaemon() throws {
        let (alpha, beta) = try pair(serving: false)
        try alpha.serve()
        // beta's agent first: it holds the vault's agent lock, so beta's daemon leaves sync to it.
        let agent = try Subprocess.launch(
            KeychainExecutable.path, ["sync", "run"], environment: beta.served.environment.merging(ServedMachine.environment) { $1 },
            errorFile: beta.served.directory.path + "/agent.err")
        close(agent.stdin)
        defer {
            kill(agent.pid, SIGTERM)
            _ = Subprocess.wait(for: agent.pid)
        }
        #expect(eventually { SyncAgentLock.holder(for: VaultLocation(path: beta.served.vaultPath)) == agent.pid })
        try beta.serve()
        #expect(try alpha.secretTool(["store", "--label=Via the agent", "--collection=sync", "team", "ops", "host", "one"], input: "1").status == 0)
        #expect(try eventually { try beta.lookup(["host", "one"]) == "1" }, "\(beta.served.serveErrors)")
        let searched = try beta.secretTool(["search", "--all", "team", "ops"])
        #expect(searched.output.contains("label = Via the agent"), "\(searched.output)")

        kill(agent.pid, SIGTERM)
        _ = Subprocess.wait(for: agent.pid)
        #expect(try alpha.secretTool(["store", "--label=Via the daemon", "--collection=sync", "team", "ops", "host", "two"], input: "2").status == 0)
        #expect(try eventually { try beta.lookup(["host", "two"]) == "2" }, "\(beta.served.serveErrors)")
        #expect(try beta.secretTool(["search", "--all", "team", "ops"]).output.components(separatedBy: "label = Via the").count == 3)
    }

    /// Two machines in one sync group, each serving its vault unless `serving` is false.
    private func pair(serving: Bool = true) throws -> (ServedMachine, ServedMachine) {
        let alpha = try ServedMachine(), beta = try ServedMachine()
        try alpha.ok(["sync", "init", "--endpoints", cluster.endpoints, "--name", "alpha"])
        let code = try alpha.ok(["sync", "invite"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try beta.ok(["sync", "join", "--endpoints", cluster.endpoints, "--name", "beta"], input: code + "\n")
        if serving {
            try alpha.serve()
            try beta.serve()
        }
        return (alpha, beta)
    }
}

extension ServedMachine {
    /// Runs `statement` with `item` the only item of the sync collection (Python secretstorage).
    func python(_ statement: String) throws -> CommandResult {
        let script = """
            import secretstorage
            bus = secretstorage.dbus_init()
            (item,) = list(secretstorage.get_collection_by_alias(bus, 'sync').get_all_items())
            \(statement)
            """
        return try served.run(ServedCollectionSyncTests.python ?? "/usr/bin/false", ["-c", script])
    }
}
