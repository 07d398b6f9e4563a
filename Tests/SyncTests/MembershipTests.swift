import Foundation
import KeychainTestSupport
import Testing

@_spi(Reliability) @testable import KeychainCore

/// Membership only moves forward, and after a removal only
/// current members' writes count.
extension SyncTests {
    /// A client of the test's cluster, playing a hostile etcd by editing what it holds.
    var hostile: EtcdClient { get throws { try EtcdClient(EtcdClient.Configuration(endpoints: cluster.endpoints.components(separatedBy: ","))) } }

    /// The one group's member lists on the cluster, by epoch.
    func memberLists() throws -> [UInt32: EtcdClient.KeyValue] {
        let prefix = Array("/kc1/".utf8)
        let lists = try hostile.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.filter { String(decoding: $0.key, as: UTF8.self).contains("/m/") }
        return Dictionary(lists.map { (SyncRecords.membersEpoch($0.value) ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The key and value of the member list of `epoch`.
    func memberList(epoch: UInt32) throws -> EtcdClient.KeyValue {
        guard let list = try memberLists()[epoch] else { throw Failure("no member list of epoch \(epoch)") }
        return list
    }

    /// Deletes the list of `epoch` and its key shares, as a hostile etcd (or a device with
    /// write access to a cluster without authentication) can.
    func deleteEpoch(_ epoch: UInt32) throws {
        let prefix = Array("/kc1/".utf8)
        let list = try memberList(epoch: epoch).key
        for kv in try hostile.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs {
            if String(decoding: kv.key, as: UTF8.self).contains("/k/\(epoch)/") || kv.key == list { try hostile.delete(kv.key) }
        }
    }

    /// The epoch head's key on the cluster (one group).
    func headKey() throws -> [UInt8] {
        let prefix = Array("/kc1/".utf8)
        guard let head = try hostile.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.first(where: { $0.key.last == UInt8(ascii: "e") }) else {
            throw Failure("no epoch head")
        }
        return head.key
    }

    /// The sync engine of `machine`'s vault, in this process: what a device with a client of
    /// its own does.
    func engine(of machine: Machine) throws -> SyncEngine {
        let path = machine.home.path + "/data/keychain/default.keychain"
        return try SyncEngine(vault: Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false, syncsInBackground: false)))
    }

    /// Every item record the cluster holds.
    func itemRecords() throws -> [EtcdClient.KeyValue] {
        let prefix = Array("/kc1/".utf8)
        return try hostile.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.filter { String(decoding: $0.key, as: UTF8.self).contains("/i/") }
    }

    /// The epoch an item record says it is sealed under: bytes 1 to 4 after the format byte.
    func epoch(of record: EtcdClient.KeyValue) -> UInt32? {
        record.value.count > 5 ? record.value[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : nil
    }

    @Test("a rolled-back member list is refused by a joining device, repaired and reported by the existing one; the removed device receives nothing")
    func rolledBackMemberList() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let removed = Machine("removed", cluster)
        try removed.join(try alpha.invite())
        try alpha.ok(["sync", "remove-device", "removed"])
        let out = try removed.syncOnce()
        #expect(out.status == 4 && out.stderr.contains("removed"), "\(out.stderr)")

        // etcd rolls the lists and the epoch head back: epoch 2's list is gone, the head names 1.
        let code = try alpha.invite()
        try deleteEpoch(2)
        try hostile.put(try headKey(), Array("1".utf8))
        let beta = Machine("beta", cluster)
        let refused = try beta.keychain(["sync", "join", "--endpoints", cluster.endpoints, "--name", "beta"], input: code)
        #expect(refused.status == 4 && refused.stderr.contains("rolled back"), "\(refused.status) \(refused.stderr)")
        #expect(try beta.keychain(["sync", "status"]).status != 0, "the refused join enrolled nothing")

        // The round that met it says so, on standard error and in its exit status.
        let repaired = try alpha.syncOnce()
        #expect(repaired.status == 4 && repaired.stderr.contains("rolled-back member list"), "\(repaired.status) \(repaired.stderr)")
        let alarm = try alpha.status()["membershipAlarm"] as? [String: Any]
        #expect(alarm?["kind"] as? String == "rolled back" && alarm?["servedEpoch"] as? Int == 1 && alarm?["heldEpoch"] as? Int == 2, "\(String(describing: alarm))")
        #expect(try alpha.ok(["sync", "status"]).contains("rolled-back member list"))
        #expect(try memberLists().keys.max() == 2, "the held list was written back")

        try beta.join(try alpha.invite())
        #expect(try beta.status()["epoch"] as? Int == 2)
        try beta.setCloud("tokenB", "new-secret-from-beta")
        try beta.round()
        _ = try removed.syncOnce()
        #expect(try removed.getCloud("tokenB") == nil)
        try alpha.round()
        #expect(try alpha.getCloud("tokenB") == "new-secret-from-beta")
        // The removed device's own writes: it says on standard error that they do not travel.
        let stranded = try removed.keychain(["set", "-i", "Shared", "--icloud", "stranded"], input: "x")
        #expect(stranded.status == 0 && stranded.stderr.contains("removed from its sync group"), "\(stranded.stderr)")
    }

    @Test("after a removal the removed device's writes, under the old epoch or with a forged signer, are refused on every remaining device, and it opens none of the records left")
    func removedDeviceCannotWrite() throws {
        let machines = try group(["alpha", "beta", "removed"], on: cluster)
        let (alpha, beta, removed) = (machines[0], machines[1], machines[2])
        try alpha.setCloud("tokenA", "real-value-from-alpha")
        try alpha.round()
        for machine in machines { try machine.round() }
        #expect(try removed.getCloud("tokenA") == "real-value-from-alpha")
        // A record sealed under epoch 1, which the removed device holds the key of.
        let old = try itemRecords().filter { epoch(of: $0) == 1 }
        try alpha.ok(["sync", "remove-device", "removed"])
        try beta.round()

        // A hostile etcd shows the removed device the lists from before its removal: its own
        // client sees in etcd's history that a newer list existed, and sends nothing.
        let newer = try memberList(epoch: 2)
        try deleteEpoch(2)
        try removed.setCloud("tokenA", "EVIL-from-removed")
        #expect(try removed.syncOnce().status != 0)
        try hostile.put(newer.key, newer.value)
        #expect(try itemRecords().filter { epoch(of: $0) == 1 }.isEmpty, "the removed device's client wrote under the old epoch")
        // The removed device, with a client of its own, puts a record under the old epoch.
        let evil = old
        #expect(evil.count == 1)
        // A remaining device deletes a record it refused under a retired epoch: etcd serves it
        // to each device again, as a hostile one would.
        for machine in [alpha, beta] {
            for record in evil { try hostile.put(record.key, record.value) }
            // A round that refused something exits non-zero and says why.
            let round = try machine.syncOnce()
            #expect(round.status == 4 && !round.output.contains("\"refused\":0") && round.stderr.contains("not used"), "\(machine.name): \(round.output) \(round.stderr)")
            #expect(try machine.getCloud("tokenA") == "real-value-from-alpha")
        }

        // The same record with the bytes where its signer once was in clear edited to alpha's
        // id: the signer is inside the seal now, so the edit breaks the seal and it is refused.
        let alphaID = try #require(alpha.status()["device"] as? String)
        for machine in [beta, alpha] {
            for record in evil {
                var forged = record.value
                forged.replaceSubrange(5..<21, with: stride(from: 0, to: 32, by: 2).map { UInt8(alphaID.dropFirst($0).prefix(2), radix: 16)! })
                try hostile.put(record.key, forged)
            }
            // A round that refused something exits non-zero and says why.
            let round = try machine.syncOnce()
            #expect(round.status == 4 && !round.output.contains("\"refused\":0") && round.stderr.contains("not used"), "\(machine.name): \(round.output) \(round.stderr)")
            #expect(try machine.getCloud("tokenA") == "real-value-from-alpha")
        }
        #expect(try alpha.status()["refused"] as? Int ?? 0 >= 2)

        // Every record left is sealed under the new epoch, whose key the removed device never had.
        let left = try itemRecords()
        #expect(!left.isEmpty && left.allSatisfy { epoch(of: $0) == 2 }, "\(left.map { epoch(of: $0) })")
        #expect(try removed.status()["epoch"] as? Int == 1)
    }

    @Test(
        "etcd shows two devices different lists (each removes a device in its own epoch 2): the one that meets the other's list stops sending, says so on every command and in sync status, and resolve continues its history"
    )
    func forkedHistoryStopsSending() throws {
        let machines = try group(["alpha", "beta", "gamma"], on: cluster)
        let (alpha, beta, gamma) = (machines[0], machines[1], machines[2])
        // alpha removes gamma; etcd then shows beta the lists from before, and beta removes
        // gamma too: two epoch-2 histories, under two different group keys.
        // beta's own client would see the head moved past it and refuse: etcd showing it
        // another history is played by a client that does not look.
        try alpha.ok(["sync", "remove-device", "gamma"])
        try deleteEpoch(2)
        try engine(of: beta).startEpochIgnoringTheGroup(removing: "gamma")
        #expect(try alpha.status()["epoch"] as? Int == 2 && beta.status()["epoch"] as? Int == 2)

        // etcd serves beta's list; alpha's next contact refuses it: a fork, reported, and
        // alpha sends nothing more.
        let met = try alpha.syncOnce()
        #expect(met.status == 4 && met.stderr.contains("another history"), "\(met.status) \(met.stderr)")
        let alarm = try alpha.status()["membershipAlarm"] as? [String: Any]
        #expect(alarm?["kind"] as? String == "forked history" && alarm?["servedEpoch"] as? Int == 2, "\(String(describing: alarm))")
        #expect(try alpha.ok(["sync", "status"]).contains("keychain sync resolve"))
        let write = try alpha.keychain(["set", "-i", "Shared", "--icloud", "afterFork"], input: "alpha-only")
        #expect(write.status == 0 && write.stderr.contains("forked history"), "every command says it: \(write.stderr)")
        #expect(try alpha.keychain(["get", "-i", "Shared", "--icloud", "afterFork"]).stderr.contains("forked history"))
        #expect(try alpha.syncOnce().status == 4)
        #expect(try alpha.status()["outbox"] as? Int ?? 0 > 0, "nothing was sent")

        // The person trusts alpha: resolve starts epoch 3 from alpha's list. beta, of the
        // other history, finds no share of epoch 3 it can name or open: it is out, and joins again.
        // beta, of the other history, is left out by name: the new key goes to alpha alone.
        let resolved = try alpha.ok(["sync", "resolve", "--exclude", "beta"])
        #expect(resolved.contains("shared with alpha;") && !resolved.contains("beta"), "resolve names the members it re-keys: \(resolved)")
        try alpha.round()
        #expect(try alpha.status()["epoch"] as? Int == 3)
        let other = try beta.syncOnce()
        #expect(other.status == 4 && other.stderr.contains("removed"), "\(other.stderr)")
        try beta.ok(["sync", "leave"])
        try beta.ok(["sync", "join", "--endpoints", cluster.endpoints, "--name", "beta2"], input: try alpha.invite() + "\n")
        try beta.round()
        #expect(try beta.getCloud("afterFork") == "alpha-only")
        _ = try gamma.syncOnce()
        #expect(try gamma.getCloud("afterFork") == nil)
    }

    @Test("a member list forked at one epoch (etcd showed two joining devices the list from before the other's join) is reported as forked, and both joins are kept")
    func forkedJoinsDetected() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let before = try memberList(epoch: 1)
        let beta = Machine("beta", cluster)
        try beta.join(try alpha.invite())
        try alpha.round()
        // gamma is shown the list without beta, and joins onto it.
        let code = try alpha.invite()
        try hostile.put(before.key, before.value)
        let gamma = Machine("gamma", cluster)
        try gamma.join(code)
        let met = try alpha.syncOnce()
        #expect(met.status == 4 && met.stderr.contains("forked member list"), "\(met.stderr)")
        let alarm = try alpha.status()["membershipAlarm"] as? [String: Any]
        #expect(alarm?["kind"] as? String == "forked", "\(String(describing: alarm))")
        let names = (try alpha.status()["devices"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(Set(names ?? []) == ["alpha", "beta", "gamma"])
    }
}
