import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Sync that keeps itself running. Without a systemd user session (as in
/// CI's container) each command starts the vault's sync agent when none runs.
extension SyncTests {
    /// The agent of `machine`'s vault, if one runs.
    func agent(of machine: Machine) -> pid_t? { SyncAgentLock.holder(for: VaultLocation(path: machine.vaultPath)) }

    /// Stops the agents the test's commands started (by their process ids) and waits for them to go.
    func stopAgents(_ machines: [Machine]) {
        for machine in machines {
            guard let pid = agent(of: machine) else { continue }
            kill(pid, SIGTERM)
            for _ in 0..<100 where agent(of: machine) != nil { usleep(100_000) }
        }
    }

    @Test("two homes: one 'set --icloud' on one, one 'get' on the other, and no 'sync run' typed: the agents that init and join started carry it; each exits when idle")
    func setOnOneGetOnAnotherWithoutSyncRun() throws {
        let environment = ["KEYCHAIN_SYNC_AGENT_IDLE": "20"]
        let alpha = Machine("alpha", cluster, agent: environment)
        let beta = Machine("beta", cluster, agent: environment)
        defer { stopAgents([alpha, beta]) }
        try alpha.initialize()
        try beta.join(try alpha.invite())
        #expect(agent(of: alpha) != nil && agent(of: beta) != nil, "init and join started an agent each")

        try alpha.setCloud("Skroob", "12345")
        // The other machine's agent applies it as the watch reports it; the user's one `get`
        // comes when it has (tried again only while it has not yet arrived).
        var got: String?
        for _ in 0..<300 where got == nil {
            got = try beta.getCloud("Skroob")
            if got == nil { usleep(100_000) }
        }
        #expect(got == "12345")
        let started = try #require(agent(of: beta))

        // A command finds the running agent and starts no other (one per vault).
        try beta.ok(["list"])
        #expect(agent(of: beta) == started)
        // Idle (nothing sent or received for KEYCHAIN_SYNC_AGENT_IDLE seconds), it exits.
        for _ in 0..<600 where agent(of: beta) != nil { usleep(100_000) }
        #expect(agent(of: beta) == nil, "the agent exited when idle")
        // The next command that touches the vault starts it again.
        _ = try beta.getCloud("Skroob")
        #expect(agent(of: beta) != nil)
    }

    @Test("an agent started on demand runs in /, with none of the command's other variables, and writes its messages to the log 'sync status' names")
    func agentStartedOnDemandIsMinimal() throws {
        let alpha = Machine("alpha", cluster, agent: ["KEYCHAIN_SYNC_AGENT_IDLE": "60", "MY_API_TOKEN": "not-for-the-agent"])
        defer { stopAgents([alpha]) }
        try alpha.initialize()
        let pid = try #require(agent(of: alpha), "init started an agent")

        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        #expect(!variables.contains { $0.hasPrefix("MY_API_TOKEN=") }, "\(variables)")
        #expect(!variables.contains { $0.hasPrefix("PATH=") || $0.hasPrefix("XDG_DATA_HOME=") }, "\(variables)")
        #expect(variables.contains("KEYCHAIN_KERNEL_KEYRING=off"), "what the vault's keys need is kept: \(variables)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") == "/")

        let log = alpha.vaultPath + ".sync-agent.log"
        let status = try alpha.ok(["sync", "status"])
        #expect(status.contains("agent:         running (process \(pid)); its messages: \(log)"), "\(status)")
        #expect(try alpha.status()["agentMessages"] as? String == log)
        let started = try String(contentsOfFile: log, encoding: .utf8)
        #expect(started.contains("agent started (process \(pid)) by keychain sync"), "\(started)")
        let info = try FileManager.default.attributesOfItem(atPath: log)
        #expect((info[.posixPermissions] as? Int) == 0o600)

        // What the agent meets goes to its log: here, the vault leaving the group under it.
        try alpha.ok(["sync", "leave"])
        var text = ""
        for _ in 0..<150 where text.components(separatedBy: "keychain sync: ").count < 3 {
            usleep(100_000)
            text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        }
        #expect(text.components(separatedBy: "keychain sync: ").count >= 3, "the agent's own message is in the log: \(text)")
    }

    @Test(
        "where systemd runs the session, init on a passphrase vault installs no service without a passphrase file, saying why; with one, the unit reads it as a credential",
        .enabled(if: (try? KernelKeyring().probe().get()) != nil, "the kernel keyring (keyctl) is refused here: the vault cannot be unlocked for the user"))
    func systemdUnitOfAPassphraseVault() throws {
        for withFile in [false, true] {
            let runtime = TemporaryDirectory()
            // What SystemdUserUnit looks for: the user manager's socket (here a plain file, so
            // systemctl itself fails and the unit stays written for the test to read).
            try FileManager.default.createDirectory(atPath: runtime.path + "/systemd", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: runtime.path + "/systemd/private", contents: nil)
            let environment = [
                "XDG_RUNTIME_DIR": runtime.path, "XDG_CONFIG_HOME": runtime.path + "/config", "KEYCHAIN_SYNC_AGENT_IDLE": "5", "KEYCHAIN_KERNEL_KEYRING": "on",
            ]
            let machine = Machine(withFile ? "with-file" : "without", cluster, agent: environment)
            defer {
                stopAgents([machine])
                _ = try? machine.keychain(["lock"])
            }
            let passphrase = machine.home.file("pw", "correct horse battery")
            chmod(passphrase, 0o600)
            let withPassphrase = ["KEYCHAIN_PASSPHRASE_FILE": passphrase]
            #expect(
                try KeychainExecutable.run(["passwd"], environment: environment.merging(["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]) { $1 }, home: machine.home.path).status == 0)
            // Unlocked for the user: init needs no passphrase of its own; the service would.
            #expect(try KeychainExecutable.run(["unlock"], environment: environment.merging(withPassphrase) { $1 }, home: machine.home.path).status == 0)
            let initialized = try KeychainExecutable.run(
                ["sync", "init", "--endpoints", cluster.endpoints, "--name", machine.name], environment: withFile ? environment.merging(withPassphrase) { $1 } : environment,
                home: machine.home.path)
            #expect(initialized.status == 0, "\(initialized.stderr)")
            let units = (try? FileManager.default.contentsOfDirectory(atPath: runtime.path + "/config/systemd/user")) ?? []
            if withFile {
                let unit = try String(contentsOfFile: runtime.path + "/config/systemd/user/" + #require(units.first { $0.hasSuffix(".service") }), encoding: .utf8)
                #expect(unit.contains("LoadCredential=keychain-passphrase:\(passphrase)\n"), "\(unit)")
            } else {
                #expect(units.isEmpty, "no unit for a passphrase vault without a passphrase file: \(units)")
                #expect(initialized.stderr.contains("no systemd user service was installed") && initialized.stderr.contains("KEYCHAIN_PASSPHRASE_FILE"), "\(initialized.stderr)")
            }
        }
    }

    @Test("a get of an iCloud item not yet here, with no agent running, starts the agent and waits for its first round: the value, not 'not found'")
    func readWaitsForTheFirstRound() throws {
        let environment = ["KEYCHAIN_SYNC_AGENT_IDLE": "30"]
        let alpha = Machine("alpha", cluster, agent: environment)
        let beta = Machine("beta", cluster, agent: environment)
        defer { stopAgents([alpha, beta]) }
        try alpha.initialize()
        try beta.join(try alpha.invite())
        // beta's agent has exited (idle, or the machine slept); alpha writes meanwhile.
        stopAgents([beta])
        #expect(agent(of: beta) == nil)
        try alpha.setCloud("Away", "the-value")

        let get = try beta.keychain(["get", "-i", "Shared", "--icloud", "Away"])
        #expect(get.status == 0 && get.output == "the-value\n", "\(get.status) \(get.output) \(get.stderr)")
        #expect(agent(of: beta) != nil, "the agent it started keeps running")
        // An item that does not exist anywhere is still not found, once the round is done.
        let missing = try beta.keychain(["contains", "-i", "Shared", "--icloud", "Nowhere"])
        #expect(missing.status == 1 && missing.stderr.isEmpty, "\(missing.stderr)")
    }

    @Test("when the agent's first round does not finish within the bound (the cluster away), the read says so and exits 1")
    func readSaysWhenTheFirstRoundTimesOut() throws {
        let beta = Machine("beta", cluster, agent: ["KEYCHAIN_SYNC_AGENT_IDLE": "30"])
        try beta.initialize()
        stopAgents([beta])
        for member in 1...3 { try cluster.pause(member) }
        defer {
            for member in 1...3 { try? cluster.resume(member) }
            stopAgents([beta])
        }
        let get = try beta.keychain(["get", "-i", "Shared", "--icloud", "Away"])
        #expect(get.status == 1 && get.stderr.contains("has not finished its first round within 3 s"), "\(get.stderr)")
        #expect(get.stderr.contains(".sync-agent.log"), "it names where the agent says why: \(get.stderr)")
    }

    @Test("with no agent, a set sends its own change at once")
    func setSendsAtOnce() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try machines[0].setCloud("token", "sent-by-the-set")
        #expect(try machines[0].status()["outbox"] as? Int == 0)
        try machines[1].round()
        #expect(try machines[1].getCloud("token") == "sent-by-the-set")
    }

    @Test("a command reading an enrolled vault sends and receives nothing and, with changes unsent and no agent, says so on standard error")
    func unsentChangesReported() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        let alpha = machines[0]
        try cluster.pause(1)
        try cluster.pause(2)
        try cluster.pause(3)
        defer {
            for member in 1...3 { try? cluster.resume(member) }
        }
        // The cluster does not answer: the write succeeds after the short bound, and waits.
        let set = try alpha.keychain(["set", "-i", "Shared", "--icloud", "offline"], input: "v")
        #expect(set.status == 0, "\(set.stderr)")
        // What a read must leave as it was: the outbox, the pull cursor and when it last pulled.
        func syncState() throws -> [Int?] {
            let status = try alpha.status()
            return ["outbox", "cursor", "lastPull"].map { status[$0] as? Int }
        }
        let before = try syncState()
        #expect(before[0] == 1)
        for command in [["get", "-i", "Shared", "--icloud", "offline"], ["status"]] {
            let result = try alpha.keychain(command)
            #expect(result.status == 0 && result.stderr.contains("1 change waits to be sent and no sync agent runs"), "\(command): \(result.stderr)")
        }
        #expect(try syncState() == before, "get and status sent and received nothing")
    }

    @Test("a removed device's 'sync status' says it was removed, not that the cluster is unreachable")
    func removedDeviceStatus() throws {
        let machines = try group(["alpha", "gone"], on: cluster)
        try machines[0].ok(["sync", "remove-device", "gone"])
        let text = try machines[1].ok(["sync", "status"])
        #expect(text.contains("removed from the group") && !text.contains("unreachable"), "\(text)")
        #expect(try machines[1].status()["removed"] as? Bool == true)
    }
}
