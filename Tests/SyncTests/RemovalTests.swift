import Foundation
import KeychainTestSupport
import Testing

@_spi(Reliability) @testable import KeychainCore

/// A removed device is out for good: nothing written after its removal is sealed under a key
/// it holds, and no list it makes is followed, even by a device that has not yet caught up.
extension SyncTests {
    @Test(
        "a device that has not yet followed a removal seals its next write under the new epoch (the write compares the epoch in its own transaction): the removed device, shown the old list, reads nothing"
    )
    func laggingWriterSealsUnderTheNewEpoch() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        try alpha.setCloud("before", "shared-with-all")
        try alpha.round()
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        // beta has run no round since: its write is sent at once, by the set itself.
        try beta.setCloud("after", "written-after-the-removal")
        #expect(try beta.status()["epoch"] as? Int == 2, "beta followed the removal to send its write")
        let epochs = try itemRecords().compactMap { epoch(of: $0) }
        #expect(!epochs.isEmpty && epochs.allSatisfy { $0 == 2 }, "records under epoch 1 after the removal: \(epochs)")

        // A hostile etcd shows rogue the lists from before its removal: it still reads nothing new.
        let newer = try memberList(epoch: 2)
        try deleteEpoch(2)
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("after") == nil)
        try hostile.put(newer.key, newer.value)
        try alpha.round()
        #expect(try alpha.getCloud("after") == "written-after-the-removal")
    }

    @Test(
        "a removed device that deletes the new epoch's list and shares before a lagging device writes reads nothing: the write is held, the round says why, and the device follows once a member puts them back"
    )
    func deletedEpochBeforeTheLaggingWrite() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        // rogue, with write access to a cluster without authentication, deletes what alpha
        // wrote before beta, which has run no round since, writes.
        try deleteEpoch(2)
        try beta.setCloud("after", "written-after-the-removal")
        let epochs = try itemRecords().compactMap { epoch(of: $0) }
        #expect(!epochs.contains(1), "beta sealed a record under the retired epoch: \(epochs)")
        let held = try beta.syncOnce()
        #expect(held.status != 0 && held.stderr.contains("deleted"), "\(held.status) \(held.stderr)")
        // rogue also puts the epoch head back to epoch 1: etcd's history shows beta that a
        // list of epoch 2 was written and deleted.
        try hostile.put(try headKey(), Array("1".utf8))
        try beta.setCloud("after", "written-after-the-removal, again")
        let rewritten = try beta.syncOnce()
        #expect(rewritten.status != 0 && rewritten.stderr.contains("written on etcd and then deleted"), "\(rewritten.status) \(rewritten.stderr)")
        #expect(!(try itemRecords().compactMap { epoch(of: $0) }.contains(1)), "beta sealed a record under the retired epoch")
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("after") == nil, "the removed device read a write made after its removal")

        // alpha's next round puts the list and its shares back; beta follows and sends.
        _ = try alpha.syncOnce()
        try beta.round()
        #expect(try beta.status()["epoch"] as? Int == 2, "beta did not follow the repaired epoch")
        try alpha.round()
        #expect(try alpha.getCloud("after") == "written-after-the-removal, again")
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("after") == nil)
    }

    @Test(
        "a removed device that deletes the new epoch's list and starts one of its own leads no one: the device that had not caught up sees a list written where another was, stops sending, and says why"
    )
    func removedDeviceCannotLead() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        // Every device holds the list with all three.
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        // rogue, with write access to a cluster without authentication, removes what alpha
        // wrote and removes alpha in an epoch 2 of its own, whose key share it tags under
        // the epoch-1 key it holds.
        try deleteEpoch(2)
        try engine(of: rogue).startEpochIgnoringTheGroup(removing: "alpha")

        let met = try beta.syncOnce()
        #expect(met.status == 4 && met.stderr.contains("another history"), "\(met.status) \(met.stderr)")
        let status = try beta.status()
        #expect(status["epoch"] as? Int == 1, "beta did not follow rogue's epoch")
        #expect((status["membershipAlarm"] as? [String: Any])?["kind"] as? String == "forked history")
        let write = try beta.keychain(["set", "-i", "Shared", "--icloud", "tokenB"], input: "beta-secret")
        #expect(write.stderr.contains("forked history"), "\(write.stderr)")
        _ = try beta.syncOnce()
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("tokenB") == nil, "rogue read what beta wrote")
        let sealedUnderRogue = try itemRecords().filter { epoch(of: $0) == 2 }
        #expect(sealedUnderRogue.isEmpty, "beta sent \(sealedUnderRogue.count) records under rogue's epoch")
        // alpha meets rogue's list at its own epoch: a fork too.
        #expect(try alpha.syncOnce().status == 4)
    }

    @Test(
        "resolve on a device that never followed a removal refuses (its list still names the removed device), says what to do, and the removed device reads nothing written after"
    )
    func resolveOnALaggingDeviceRefuses() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        // rogue deletes alpha's epoch 2, starts one of its own (beta meets a fork), then
        // deletes that too, so that a resolve on beta could start epoch 2 from beta's list.
        try deleteEpoch(2)
        try engine(of: rogue).startEpochIgnoringTheGroup(removing: "alpha")
        #expect(try beta.syncOnce().status == 4)
        try deleteEpoch(2)
        let resolve = try beta.keychain(["sync", "resolve"])
        #expect(resolve.status != 0 && resolve.stderr.contains("never followed"), "\(resolve.status) \(resolve.output) \(resolve.stderr)")
        let excluding = try beta.keychain(["sync", "resolve", "--exclude", "rogue"])
        #expect(excluding.status != 0, "\(excluding.output)")
        // With the epoch head deleted too, etcd's history still shows the list of epoch 2.
        try hostile.delete(try headKey())
        let headless = try beta.keychain(["sync", "resolve"])
        #expect(headless.status != 0 && headless.stderr.contains("written on etcd and then deleted"), "\(headless.status) \(headless.stderr)")
        #expect(try memberLists()[2] == nil, "beta started an epoch from its lagging list")
        try beta.setCloud("late", "written-after-the-removal")
        _ = try beta.syncOnce()
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("late") == nil, "the removed device read a write made after its removal")
    }

    @Test(
        "a device that had not followed a removal follows the new epoch after another device joined it: no false fork, and what it writes reaches the joined device, not the removed one"
    )
    func joinAfterARemovalIsFollowed() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        let delta = Machine("delta", cluster)
        try delta.join(try alpha.invite())
        // beta meets epoch 2 with delta in its list, which the epoch's start did not name.
        let met = try beta.syncOnce()
        #expect(met.status == 0, "\(met.status) \(met.stderr)")
        let status = try beta.status()
        #expect(status["epoch"] as? Int == 2 && (status["membershipAlarm"] as? [String: Any]) == nil, "\(status)")
        try beta.setCloud("afterJoin", "from-beta")
        try beta.round()
        try delta.round()
        #expect(try delta.getCloud("afterJoin") == "from-beta")
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("afterJoin") == nil)
    }

    @Test("two devices may not share a name: a join under a taken name is refused and leaves the invitation usable; remove-device then works by name")
    func deviceNamesAreUnique() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let code = try alpha.invite()
        let twin = Machine("alpha", cluster)
        let refused = try twin.keychain(["sync", "join", "--endpoints", cluster.endpoints, "--name", "alpha"], input: code + "\n")
        #expect(refused.status == 2 && refused.stderr.contains("already in the group"), "\(refused.status) \(refused.stderr)")
        try twin.ok(["sync", "join", "--endpoints", cluster.endpoints, "--name", "alpha-2"], input: code + "\n")
        try alpha.ok(["sync", "remove-device", "alpha-2"])
        let names = (try alpha.status()["devices"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["alpha"])
    }
}

extension SyncTests {
    @Test("remove-device by a name that is also the start of another device's id removes the device of that name")
    func removeDeviceByNamePrefersTheName() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        let betaID = try #require(machines[1].status()["device"] as? String)
        let named = Machine(String(betaID.prefix(1)), cluster)
        try named.join(try machines[0].invite())
        try machines[0].ok(["sync", "remove-device", named.name])
        let names = (try machines[0].status()["devices"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names?.sorted() == ["alpha", "beta"], "\(names ?? [])")
    }
}

extension SyncTests {
    @Test("etcd learns no device id from a key, an item record, a member list or a key share, and a member list's size does not tell the names' lengths")
    func etcdSeesNoDeviceIdentity() throws {
        let machines = try group(["a", "b", "a-much-longer-device-name"], on: cluster)
        for (index, machine) in machines.enumerated() {
            try machine.setCloud("token\(index)", "value\(index)")
            try machine.round()
        }
        try machines[0].ok(["sync", "remove-device", "b"])
        try machines[2].setCloud("token2", "edited")
        for machine in [machines[0], machines[2]] { try machine.round() }
        #expect(try itemRecords().count == 3)
        let ids = try machines.map { try #require($0.status()["device"] as? String) }
        let prefix = Array("/kc1/".utf8)
        let records = try hostile.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs
        for id in ids {
            let raw = stride(from: 0, to: 32, by: 2).map { UInt8(id.dropFirst($0).prefix(2), radix: 16)! }
            for record in records {
                #expect(!String(decoding: record.key, as: UTF8.self).contains(id), "a key names device \(id.prefix(8))")
                let carries = record.value.count >= 16 && (0...(record.value.count - 16)).contains { Array(record.value[$0..<($0 + 16)]) == raw }
                #expect(!carries, "a record carries device \(id.prefix(8)) in clear")
            }
        }
        // Another group whose one device has a short name: its list is as long as a long name's.
        let known = Set(records.map(\.key))
        let short = Machine("s", cluster)
        try short.initialize()
        let long = Machine("a-much-longer-device-name", cluster)
        try long.initialize()
        let newLists = try hostile.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.filter {
            !known.contains($0.key) && String(decoding: $0.key, as: UTF8.self).hasSuffix("/m/00000001")
        }
        #expect(newLists.count == 2)
        let sizes = Set(newLists.map(\.value.count))
        #expect(sizes.count == 1, "member list sizes \(sizes)")
    }
}

extension SyncTests {
    @Test("the agent ('sync run') logs a round that refused values, on its standard error")
    func agentLogsRefusals() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        try machines[1].setCloud("token", "value")
        try machines[1].round()
        // etcd edits the record: it no longer opens.
        let record = try #require(try itemRecords().first)
        var edited = record.value
        edited[8] ^= 0xFF
        try hostile.put(record.key, edited)
        let agent = try machines[0].keychain(["sync", "run", "--idle", "1"])
        #expect(agent.stderr.contains("were not used"), "\(agent.status) \(agent.stderr)")
    }
}

extension SyncTests {
    @Test("a round that sends more changes than one etcd transaction holds, with the epoch's compare in each, goes through")
    func fullTransactionsWithTheEpochCompare() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault(
            VaultConfiguration(location: VaultLocation(path: directory.path + "/sync.keychain"), usesKernelKeyring: false, syncsInBackground: false))
        let engine = try SyncEngine.create(vault: vault, cluster: SyncCluster(endpoints: cluster.endpoints.components(separatedBy: ",")), deviceName: "bulk")
        for index in 0..<300 {
            let attributes = Attributes(service: "bulk", account: "k\(index)", synchronizable: true, accessibility: .afterFirstUnlock)
            try vault.upsert(Item(.genericPassword, attributes: attributes, value: SecretBytes(utf8: "v\(index)")))
        }
        #expect(try engine.syncOnce().sent == 300)
        #expect(try itemRecords().count == 300)
    }
}
