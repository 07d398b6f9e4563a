import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Membership only moves forward, and after a removal only
/// current members' writes count.
extension SyncTests {
    /// A client of the test's cluster, playing a hostile etcd by editing what it holds.
    var hostile: EtcdClient { get throws { try EtcdClient(EtcdClient.Configuration(endpoints: cluster.endpoints.components(separatedBy: ","))) } }

    /// The one group's member list key on the cluster.
    func membersKey() throws -> [UInt8] {
        let prefix = Array("/kc1/".utf8)
        let keys = try hostile.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.map(\.key).filter { $0.last == UInt8(ascii: "m") }
        guard keys.count == 1 else { throw Failure("\(keys.count) member lists") }
        return keys[0]
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
        let key = try membersKey()
        let saved = try hostile.range(key).kvs[0].value
        try alpha.ok(["sync", "remove-device", "removed"])
        let out = try removed.syncOnce()
        #expect(out.status == 4 && out.stderr.contains("removed"), "\(out.stderr)")

        try hostile.put(key, saved)
        let beta = Machine("beta", cluster)
        let refused = try beta.keychain(["sync", "join", "--endpoints", cluster.endpoints, "--name", "beta"], input: try alpha.invite())
        #expect(refused.status == 4 && refused.stderr.contains("rolled back"), "\(refused.status) \(refused.stderr)")
        #expect(try beta.keychain(["sync", "status"]).status != 0, "the refused join enrolled nothing")

        try alpha.round()
        let alarm = try alpha.status()["membershipAlarm"] as? [String: Any]
        #expect(alarm?["kind"] as? String == "rolled back" && alarm?["servedEpoch"] as? Int == 1 && alarm?["heldEpoch"] as? Int == 2, "\(String(describing: alarm))")
        #expect(try alpha.ok(["sync", "status"]).contains("rolled-back member list"))
        #expect(SyncRecords.membersEpoch(try hostile.range(key).kvs[0].value) == 2, "the held list was written back")

        try beta.join(try alpha.invite())
        #expect(try beta.status()["epoch"] as? Int == 2)
        try beta.setCloud("tokenB", "new-secret-from-beta")
        try beta.round()
        _ = try removed.syncOnce()
        #expect(try removed.getCloud("tokenB") == nil)
        try alpha.round()
        #expect(try alpha.getCloud("tokenB") == "new-secret-from-beta")
    }

    @Test("after a removal the removed device's writes, under the old epoch or with a forged signer, are refused on every remaining device, and it opens none of the records left")
    func removedDeviceCannotWrite() throws {
        let machines = try group(["alpha", "beta", "removed"], on: cluster)
        let (alpha, beta, removed) = (machines[0], machines[1], machines[2])
        try alpha.setCloud("tokenA", "real-value-from-alpha")
        try alpha.round()
        for machine in machines { try machine.round() }
        #expect(try removed.getCloud("tokenA") == "real-value-from-alpha")
        let key = try membersKey()
        let before = try hostile.range(key).kvs[0].value
        try alpha.ok(["sync", "remove-device", "removed"])
        try beta.round()

        // A hostile etcd shows the removed device the list it was in, and it writes as before.
        try hostile.put(key, before)
        try removed.setCloud("tokenA", "EVIL-from-removed")
        try removed.round()
        let evil = try itemRecords().filter { epoch(of: $0) == 1 }
        #expect(evil.count == 1, "the removed device wrote under the old epoch")
        // A remaining device deletes a record it refused under a retired epoch: etcd serves it
        // to each device again, as a hostile one would.
        for machine in [alpha, beta] {
            for record in evil { try hostile.put(record.key, record.value) }
            let round = try machine.syncOnce()
            #expect(round.status == 0 && !round.output.contains("\"refused\":0"), "\(machine.name): \(round.output) \(round.stderr)")
            #expect(try machine.getCloud("tokenA") == "real-value-from-alpha")
        }

        // The same record claiming to be alpha's: its signature does not verify.
        let alphaID = try #require(alpha.status()["device"] as? String)
        for machine in [beta, alpha] {
            for record in evil {
                var forged = record.value
                forged.replaceSubrange(5..<21, with: stride(from: 0, to: 32, by: 2).map { UInt8(alphaID.dropFirst($0).prefix(2), radix: 16)! })
                try hostile.put(record.key, forged)
            }
            let round = try machine.syncOnce()
            #expect(round.status == 0 && !round.output.contains("\"refused\":0"), "\(machine.name): \(round.output) \(round.stderr)")
            #expect(try machine.getCloud("tokenA") == "real-value-from-alpha")
        }
        #expect(try alpha.status()["refused"] as? Int ?? 0 >= 2)

        // Every record left is sealed under the new epoch, whose key the removed device never had.
        let left = try itemRecords()
        #expect(!left.isEmpty && left.allSatisfy { epoch(of: $0) == 2 }, "\(left.map { epoch(of: $0) })")
        #expect(try removed.status()["epoch"] as? Int == 1)
    }

    @Test(
        "a forked member-list history (two devices shown different lists by etcd, each removing a device) is detected by both on their next contact and reported by sync status and --json; neither accepts the other's items"
    )
    func forkedMemberListDetected() throws {
        let machines = try group(["alpha", "beta", "gamma"], on: cluster)
        let (alpha, beta) = (machines[0], machines[1])
        let key = try membersKey()
        let common = try hostile.range(key).kvs[0].value
        // alpha removes gamma; etcd then shows beta the list from before, and beta removes
        // gamma too: two epoch-2 histories, under two different group keys.
        try alpha.ok(["sync", "remove-device", "gamma"])
        try hostile.put(key, common)
        try beta.ok(["sync", "remove-device", "gamma"])
        #expect(try alpha.status()["epoch"] as? Int == 2 && beta.status()["epoch"] as? Int == 2)

        // etcd now serves beta's list; alpha's next contact refuses it as forked.
        try alpha.round()
        let alarm = try alpha.status()["membershipAlarm"] as? [String: Any]
        #expect(alarm?["kind"] as? String == "forked" && alarm?["servedEpoch"] as? Int == 2 && alarm?["heldEpoch"] as? Int == 2, "\(String(describing: alarm))")
        #expect(try alpha.ok(["sync", "status"]).contains("forked member list"))

        // alpha wrote its own list back; beta's next contact refuses that one.
        try alpha.setCloud("afterFork", "alpha-only")
        try alpha.round()
        try beta.round()
        let betaAlarm = try beta.status()["membershipAlarm"] as? [String: Any]
        #expect(betaAlarm?["kind"] as? String == "forked", "\(String(describing: betaAlarm))")
        #expect(try beta.ok(["sync", "status"]).contains("forked member list"))
        #expect(try beta.getCloud("afterFork") == nil, "an item sealed in the other history is not accepted")
    }

    @Test("a member list forked at one epoch (etcd showed two joining devices the list from before the other's join) is reported as forked, and both joins are kept")
    func forkedJoinsDetected() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let key = try membersKey()
        let before = try hostile.range(key).kvs[0].value
        let beta = Machine("beta", cluster)
        try beta.join(try alpha.invite())
        try alpha.round()
        // gamma is shown the list without beta, and joins onto it.
        let code = try alpha.invite()
        try hostile.put(key, before)
        let gamma = Machine("gamma", cluster)
        try gamma.join(code)
        try alpha.round()
        let alarm = try alpha.status()["membershipAlarm"] as? [String: Any]
        #expect(alarm?["kind"] as? String == "forked", "\(String(describing: alarm))")
        let names = (try alpha.status()["devices"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(Set(names ?? []) == ["alpha", "beta", "gamma"])
    }
}
