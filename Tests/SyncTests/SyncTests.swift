import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Sync between machines (separate homes and vaults, one `keychain` process per step) through
/// a 3-member etcd cluster of the test's own.
@Suite("Sync through etcd", .serialized, .enabled(if: EtcdCluster.unavailableReason == nil, "\(EtcdCluster.unavailableReason ?? "")"))
struct SyncTests {
    let cluster: EtcdCluster

    init() throws { cluster = try EtcdCluster() }

    @Test("an iCloud Valet's key set on one machine is read on the two others; a local Valet's key stays home")
    func itemReachesEveryMachine() throws {
        let machines = try group(["alpha", "beta", "gamma"], on: cluster)
        try machines[0].setCloud("token", "s3cret-deploy-token")
        try machines[0].ok(["set", "-i", "Shared", "local-only"], input: "stays-here")
        try machines[0].round()
        for machine in machines.dropFirst() {
            try machine.round()
            #expect(try machine.getCloud("token") == "s3cret-deploy-token")
            #expect(try machine.keychain(["get", "-i", "Shared", "local-only"]).status == 1)
        }
    }

    @Test("a remove on one machine removes the item on every machine")
    func removeDisappearsEverywhere() throws {
        let machines = try group(["alpha", "beta", "gamma"], on: cluster)
        try machines[1].setCloud("token", "value")
        try machines[1].round()
        for machine in machines { try machine.round() }
        #expect(try machines[2].getCloud("token") == "value")
        try machines[2].ok(["remove", "-i", "Shared", "--icloud", "token"])
        try machines[2].round()
        for machine in machines {
            try machine.round()
            #expect(try machine.getCloud("token") == nil)
        }
    }

    @Test("two machines writing one key while apart converge on the later write, on both")
    func concurrentWritesConverge() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try machines[0].setCloud("token", "first")
        usleep(20_000)
        try machines[1].setCloud("token", "second")
        // beta sends first; alpha's older write must not win by arriving later.
        try machines[1].round()
        try machines[0].round()
        for machine in machines { try machine.round() }
        #expect(try machines[0].getCloud("token") == "second")
        #expect(try machines[1].getCloud("token") == "second")
    }

    @Test("a killed member interrupts nothing; the restarted one catches up")
    func killedMember() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try cluster.kill(1)
        for index in 0..<20 { try machines[0].setCloud("k\(index)", "v\(index)") }
        try machines[0].round()
        try machines[1].round()
        #expect(try machines[1].getCloud("k19") == "v19")
        try cluster.restart(1)
        try machines[1].setCloud("k0", "changed")
        try machines[1].round()
        try machines[0].round()
        #expect(try machines[0].getCloud("k0") == "changed")
    }

    @Test("with quorum lost, writes succeed locally and wait in the outbox; once it returns they reach the others exactly once")
    func quorumLost() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try cluster.pause(2)
        try cluster.pause(3)
        try machines[0].setCloud("token", "written-offline")
        #expect(try machines[0].getCloud("token") == "written-offline")
        let failed = try machines[0].syncOnce()
        #expect(failed.status == 4 && failed.stderr.contains("outbox"), "\(failed.stderr)")
        #expect(try machines[0].status()["outbox"] as? Int == 1)
        try cluster.resume(2)
        try cluster.resume(3)
        try retry { try machines[0].round() }
        #expect(try machines[0].status()["outbox"] as? Int == 0)
        try machines[1].round()
        #expect(try machines[1].getCloud("token") == "written-offline")
        let again = try machines[0].syncOnce()
        #expect(again.output.contains("\"sent\":0"), "\(again.output)")
    }

    @Test("a machine offline while the history was compacted catches up")
    func compactedHistory() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try machines[1].round()
        for index in 0..<50 { try machines[0].setCloud("token", "v\(index)") }
        try machines[0].round()
        try cluster.compact()
        try machines[1].round()
        #expect(try machines[1].getCloud("token") == "v49")
    }

    @Test("a wiped cluster is filled again by the devices, and sync goes on")
    func wipedCluster() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try machines[0].setCloud("token", "before-wipe")
        try machines[0].round()
        try machines[1].round()
        try cluster.wipe()
        try machines[0].round()
        try machines[1].round()
        try machines[1].setCloud("other", "after-wipe")
        try machines[1].round()
        try machines[0].round()
        #expect(try machines[0].getCloud("other") == "after-wipe")
        #expect(try machines[1].getCloud("token") == "before-wipe")
        let members = try machines[0].status()["devices"] as? [[String: Any]]
        #expect(Set(members?.compactMap { $0["name"] as? String } ?? []) == ["alpha", "beta"])
        let client = try EtcdClient(EtcdClient.Configuration(endpoints: cluster.endpoints.components(separatedBy: ",")))
        #expect(try client.range(Array("/kc1/".utf8), rangeEnd: EtcdClient.rangeEnd(ofPrefix: Array("/kc1/".utf8))).kvs.count >= 3)
    }

    @Test("a removed device reads nothing written after its removal")
    func removedDevice() throws {
        let machines = try group(["alpha", "beta", "gamma"], on: cluster)
        try machines[0].setCloud("before", "known-to-all")
        try machines[0].round()
        for machine in machines { try machine.round() }
        try machines[0].ok(["sync", "remove-device", "gamma"])
        try machines[0].setCloud("after", "not-for-gamma")
        try machines[0].round()
        try machines[1].round()
        #expect(try machines[1].getCloud("after") == "not-for-gamma")
        let removed = try machines[2].syncOnce()
        #expect(removed.status == 4 && removed.stderr.contains("removed"), "\(removed.stderr)")
        #expect(try machines[2].getCloud("after") == nil)
        #expect(try machines[2].getCloud("before") == "known-to-all")
    }

    @Test("etcd's data directories hold none of the secrets, services, accounts or groups used")
    func etcdLearnsNothing() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        let words = ["Zq7-secret-value", "Zq8-group-secret", "ServiceNameQx", "AccountNameQx", "GroupNameQx", "alpha", "beta"]
        try machines[0].ok(["set", "--shared-group", "AppID12345.GroupNameQx", "--icloud", "AccountNameQx"], input: "Zq8-group-secret")
        try machines[0].setCloud("AccountNameQx", "Zq7-secret-value", valet: "ServiceNameQx")
        try machines[0].round()
        try machines[1].round()
        #expect(try machines[1].getCloud("AccountNameQx", valet: "ServiceNameQx") == "Zq7-secret-value")
        #expect(try machines[1].ok(["get", "--shared-group", "AppID12345.GroupNameQx", "--icloud", "AccountNameQx"]) == "Zq8-group-secret\n")
        cluster.stop()
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: cluster.dataDirectory)
        while let file = enumerator?.nextObject() as? String {
            let path = cluster.dataDirectory + "/" + file
            guard let data = FileManager.default.contents(atPath: path), !file.hasSuffix(".log") else { continue }
            for word in words where data.range(of: Data(word.utf8)) != nil { found.append("\(word) in \(file)") }
        }
        #expect(found.isEmpty, "\(found)")
    }

    @Test("values edited, moved between keys, replayed from the past or deleted on etcd are never served and delete nothing")
    func hostileEtcd() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try machines[0].setCloud("one", "first-value")
        try machines[0].setCloud("two", "second-value")
        try machines[0].round()
        try machines[1].round()
        let client = try EtcdClient(EtcdClient.Configuration(endpoints: cluster.endpoints.components(separatedBy: ",")))
        let prefix = Array("/kc1/".utf8)
        let items = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.filter { String(decoding: $0.key, as: UTF8.self).contains("/i/") }
        #expect(items.count == 2)
        let older = items[0]
        try machines[0].setCloud("one", "newer-value")
        try machines[0].setCloud("two", "newer-two")
        try machines[0].round()
        try machines[1].round()
        let current = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.filter { String(decoding: $0.key, as: UTF8.self).contains("/i/") }

        // Edited: one byte of the ciphertext flipped.
        var edited = current[1].value
        edited[edited.count - 1] ^= 1
        try client.put(current[1].key, edited)
        var round = try machines[1].syncOnce()
        #expect(round.output.contains("\"refused\":1"), "\(round.output)")
        // The device puts its own copy back where the refused value was.
        round = try machines[1].syncOnce()
        #expect(round.output.contains("\"sent\":1"), "\(round.output)")
        // Moved: one item's value put at the other's key.
        try client.put(current[1].key, current[0].value)
        round = try machines[1].syncOnce()
        #expect(round.output.contains("\"refused\":1"), "\(round.output)")
        // Replayed: an item's older value put back.
        try client.put(older.key, older.value)
        // (The same round sends this device's own copy back where the moved value was.)
        round = try machines[1].syncOnce()
        #expect(round.output.contains("\"received\":0") && !round.output.contains("\"superseded\":0"), "\(round.output)")
        let values = [try machines[1].getCloud("one"), try machines[1].getCloud("two")]
        #expect(Set(values.compactMap { $0 }) == ["newer-value", "newer-two"])
        // Deleted: every item key removed from etcd. Nothing is deleted on the machines (a
        // delete travels as a tombstone, never as a missing key), and the next write puts it back.
        try client.delete(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix))
        try machines[1].round()
        #expect(try machines[1].getCloud("one") == "newer-value")
        try machines[1].setCloud("one", "after-the-wipe")
        try machines[1].round()
        try machines[0].round()
        #expect(try machines[0].getCloud("one") == "after-the-wipe")
    }

    @Test("'keychain sync run' keeps a machine in step while it runs: a write elsewhere arrives without a command")
    func runKeepsInStep() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        var environment = ["PATH": "/usr/bin:/bin", "HOME": machines[1].home.path, "XDG_DATA_HOME": machines[1].home.path + "/data", "KEYCHAIN_KERNEL_KEYRING": "off"]
        environment["KEYCHAIN_BACKEND"] = nil
        let runner = try Subprocess.start(KeychainExecutable.path, ["sync", "run"], environment: environment)
        defer {
            kill(runner, SIGTERM)
            _ = Subprocess.wait(for: runner)
        }
        let writer = try Subprocess.start(
            KeychainExecutable.path, ["sync", "run"], environment: environment.merging(["HOME": machines[0].home.path, "XDG_DATA_HOME": machines[0].home.path + "/data"]) { $1 })
        defer {
            kill(writer, SIGTERM)
            _ = Subprocess.wait(for: writer)
        }
        try machines[0].setCloud("live", "arrives-by-itself")
        var got: String?
        for _ in 0..<100 where got == nil {
            got = try machines[1].getCloud("live")
            if got == nil { usleep(100_000) }
        }
        #expect(got == "arrives-by-itself")
    }
}

extension SyncTests {
    @Test("a cluster that speaks TLS with a private CA and asks for client certificates: refused without them, synced with them")
    func tlsWithClientCertificates() throws {
        let secure = try EtcdCluster(tls: true)
        defer { secure.stop() }
        let alpha = Machine("alpha", secure)
        let withoutCA = try alpha.keychain(["sync", "init", "--endpoints", secure.endpoints])
        #expect(withoutCA.status == 4 && withoutCA.stderr.contains("certificate"), "\(withoutCA.stderr)")
        let withoutCertificate = try alpha.keychain(["sync", "init", "--endpoints", secure.endpoints, "--ca", secure.caFile])
        #expect(withoutCertificate.status == 4 && withoutCertificate.stderr.contains("No etcd endpoint answered"), "\(withoutCertificate.stderr)")
        let tls = ["--endpoints", secure.endpoints, "--ca", secure.caFile, "--cert", secure.certFile, "--key", secure.keyFile]
        try alpha.ok(["sync", "init", "--name", "alpha"] + tls)
        try alpha.setCloud("token", "over-tls")
        try alpha.round()
        let beta = Machine("beta", secure)
        // Names are unique in a group: the two machines share this host's name.
        try beta.ok(["sync", "join", "--name", "beta"] + tls, input: try alpha.invite())
        #expect(try beta.getCloud("token") == "over-tls")
        #expect(secure.endpoints.hasPrefix("https://"))
    }

    @Test("an invitation is used once; a made-up code finds nothing; an enrolled vault does not join twice")
    func invitationsAreOneUse() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let code = try alpha.invite()
        let beta = Machine("beta", cluster)
        try beta.join(code)
        let gamma = Machine("gamma", cluster)
        let reused = try gamma.keychain(["sync", "join", "--endpoints", cluster.endpoints], input: code)
        #expect(reused.status == 4 && reused.stderr.contains("No invitation matches"), "\(reused.stderr)")
        let madeUp = InvitationCode(userID: Random.bytes(16), secret: SecretBytes.random(count: 16)).text
        #expect(try gamma.keychain(["sync", "join", "--endpoints", cluster.endpoints], input: madeUp).stderr.contains("No invitation matches"))
        let mistyped = try gamma.keychain(["sync", "join", "--endpoints", cluster.endpoints], input: "KC1-0000")
        #expect(mistyped.status == 2 && mistyped.stderr.contains("not an invitation code"), "\(mistyped.stderr)")
        let twice = try beta.keychain(["sync", "join", "--endpoints", cluster.endpoints], input: try alpha.invite())
        #expect(twice.status == 4 && twice.stderr.contains("already enrolled"), "\(twice.stderr)")
        let members = try alpha.status()["devices"] as? [[String: Any]]
        #expect(Set(members?.compactMap { $0["name"] as? String } ?? []) == ["alpha", "beta"])
    }

    @Test("a program using an iCloud Valet syncs while it runs: its write is sent, another's arrives, with no 'sync run' beside it")
    func valetProcessSyncs() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        let environment = ["PATH": "/usr/bin:/bin", "HOME": machines[1].home.path]
        let vault = { (machine: Machine) in machine.home.path + "/data/keychain/default.keychain" }
        let (reader, output) = try Subprocess.launchReadingOutput(
            KeychainExecutable.reliabilityPath, ["worker", "sync-wait", vault(machines[1]), "token", "from-a-valet"], environment: environment)
        #expect(Subprocess.readOutput(output, until: "ready"))
        let writer = try Subprocess.run(
            KeychainExecutable.reliabilityPath, ["worker", "sync-set", vault(machines[0]), "token", "from-a-valet"],
            environment: ["PATH": "/usr/bin:/bin", "HOME": machines[0].home.path])
        #expect(writer.status == 0 && writer.output.contains("sent"), "\(writer.output) \(writer.stderr)")
        #expect(Subprocess.readOutput(output, until: "arrived"))
        #expect(Subprocess.wait(for: reader) == 0)
        close(output)
    }
}

/// Runs `body` until it succeeds, for up to about 20 s (a cluster regaining quorum).
func retry(_ body: () throws -> Void) throws {
    var last: Error?
    for _ in 0..<40 {
        do {
            try body()
            return
        } catch {
            last = error
            usleep(500_000)
        }
    }
    throw last!
}
