import Foundation
import KeychainTestSupport
import Synchronization
import Testing

@_spi(Reliability) @testable import KeychainCore

/// The epoch head under attack by a removed device with write access to a cluster without
/// authentication, and in honest flows around it (an upgrade, a wipe, a compaction, a race).
extension SyncTests {
    /// Rewrites `machine`'s sync state as a device of the previous version (2) keeps it: no
    /// head revision.
    func downgradeToVersion2(_ machine: Machine) throws {
        let engine = try engine(of: machine)
        let encoded = try engine.state().encoded()
        var bytes = encoded.withUnsafeBytes { Array($0) }
        bytes[0] = 2
        bytes.removeLast(8)
        try SyncEngine.onVault(engine.vault) { (open) throws(StoreError) in try open.writeSyncState(SecretBytes(bytes)) }
    }

    /// The removed device's own client made to take the epoch head etcd now holds, as a
    /// device that ignores the group's history can.
    func takeTheHead(_ machine: Machine) throws {
        let engine = try engine(of: machine)
        var state = try engine.state()
        state.headRevision = try hostile.range(SyncRecords.headKey(state.prefix)).kvs.first?.modRevision ?? 0
        try engine.save(state)
    }

    @Test(
        "a device two epochs behind does not follow into the epoch a removed device holds when that device deleted the newest list and set the head back"
    )
    func twoEpochsBehindDoesNotFollowIntoTheRemovedDevicesEpoch() throws {
        let machines = try group(["alpha", "beta", "rogue", "old"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        for machine in machines { try machine.round() }
        // Two removals while beta is off: epoch 2 (old removed), then epoch 3 (rogue removed).
        try alpha.ok(["sync", "remove-device", "old"])
        try rogue.round()
        try alpha.ok(["sync", "remove-device", "rogue"])
        // rogue, on a cluster without authentication: epoch 3's list and shares deleted, the
        // head put back to name epoch 2 (a new revision, no history read needed).
        try deleteEpoch(3)
        try hostile.put(try headKey(), Array("2".utf8))

        try beta.setCloud("after", "written-after-rogue-was-removed")
        _ = try beta.syncOnce()
        let epochs = try itemRecords().compactMap { epoch(of: $0) }
        let followed = try beta.status()
        #expect(!epochs.contains { $0 < 3 }, "beta (epoch \(followed["epoch"] ?? "")) sealed records under an epoch rogue holds: \(epochs)")
        try takeTheHead(rogue)
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("after") == nil, "the removed device read a write made after its removal")
    }

    @Test("an epoch head naming an epoch that never existed does not lock the group out for good: the member holding the newest list repairs it")
    func aBogusHeadIsRepaired() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        for machine in machines { try machine.round() }
        // One put by anyone with write access; then the attacker is gone.
        try hostile.put(try headKey(), Array("999".utf8))
        _ = try machines[0].syncOnce()
        let again = try machines[0].syncOnce()
        #expect(again.status == 0, "alpha, at the newest epoch, still refused: \(again.status) \(again.stderr)")
        let invite = try machines[0].keychain(["sync", "invite"])
        #expect(invite.status == 0, "no invitation can be made: \(invite.stderr)")
        let beta = try machines[1].syncOnce()
        #expect(beta.status == 0, "\(beta.status) \(beta.stderr)")
    }

    @Test("a group made before epoch heads (sync state version 2) keeps syncing after the upgrade on a cluster that compacts its history")
    func aGroupMadeBeforeHeadsUpgradesOnACompactedCluster() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        for machine in machines { try machine.round() }
        // The group as the previous version left it: no head on etcd, states of version 2.
        try hostile.delete(try headKey())
        for machine in machines { try downgradeToVersion2(machine) }
        try machines[0].setCloud("token", "v1")
        try cluster.compact()
        let alpha = try machines[0].syncOnce()
        #expect(alpha.status == 0, "\(alpha.status) \(alpha.stderr)")
        let beta = try machines[1].syncOnce()
        #expect(beta.status == 0, "\(beta.status) \(beta.stderr)")
        #expect(try machines[1].getCloud("token") == "v1")
    }

    @Test(
        "after the cluster was wiped, a device that had not followed a removal still sees in etcd's history that the new list was written and deleted"
    )
    func aWipedClusterStillShowsADeletedList() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        // The old cluster had a long history: the devices' epoch starts are far ahead of
        // where a new cluster's revisions begin.
        let client = try hostile
        for index in 0..<300 { try client.put(Array("/unrelated/\(index % 3)".utf8), Array("x".utf8)) }
        let beta = Machine("beta", cluster)
        try beta.join(try alpha.invite())
        let rogue = Machine("rogue", cluster)
        try rogue.join(try alpha.invite())
        for machine in [alpha, beta, rogue] { try machine.round() }
        try cluster.wipe()
        for machine in [alpha, beta, rogue] { _ = try machine.syncOnce() }
        for machine in [alpha, beta, rogue] { _ = try machine.syncOnce() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        // rogue deletes epoch 2 and the head before beta, which has not followed, writes.
        try deleteEpoch(2)
        try hostile.delete(try headKey())
        try beta.setCloud("after", "written-after-the-removal")
        _ = try beta.syncOnce()
        let epochs = try itemRecords().compactMap { epoch(of: $0) }
        #expect(!epochs.contains(1), "beta sealed records under epoch 1, which rogue holds: \(epochs)")
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("after") == nil, "the removed device read a write made after its removal")
    }

    @Test("a lagging device's key share deleted by the removed device is put back by a member, as the device's message says, and it follows")
    func aDeletedShareIsPutBack() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        let state = try engine(of: rogue).state()
        let betaMember = try #require(try engine(of: rogue).heldMembers(state).first { $0.name == "beta" })
        try hostile.delete(try SyncRecords.shareKey(state.prefix, epoch: 2, device: betaMember.deviceID, previousKey: state.epochKey))
        let first = try beta.syncOnce()
        for _ in 0..<2 { _ = try alpha.syncOnce() }
        let met = try beta.syncOnce()
        let followed = try beta.status()["epoch"] as? Int
        #expect(met.status == 0 && followed == 2, "epoch \(followed ?? 0), exits \(first.status), \(met.status): \(met.stderr)")
    }

    @Test("an epoch head that is not a number does not lock the group out for good")
    func aGarbledHeadIsRepaired() throws {
        let machines = try group(["alpha", "beta"], on: cluster)
        for machine in machines { try machine.round() }
        try hostile.put(try headKey(), Array("x".utf8))
        _ = try machines[0].syncOnce()
        let again = try machines[0].syncOnce()
        #expect(again.status == 0, "\(again.status) \(again.stderr)")
    }

    @Test(
        "a device two epochs behind does not follow into the epoch a removed device holds when that device deleted the newest list and the head and put the older list back unchanged"
    )
    func twoEpochsBehindWithTheHeadDeletedDoesNotFollow() throws {
        let machines = try group(["alpha", "beta", "rogue", "old"], on: cluster)
        let (alpha, beta, rogue) = (machines[0], machines[1], machines[2])
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "old"])
        try rogue.round()
        try alpha.ok(["sync", "remove-device", "rogue"])
        // rogue: epoch 3 and the head deleted; epoch 2's list, which it holds byte for byte,
        // deleted and put back, so that it starts after epoch 3's list was written.
        let second = try memberList(epoch: 2)
        try deleteEpoch(3)
        try hostile.delete(try headKey())
        try hostile.delete(second.key)
        try hostile.put(second.key, second.value)

        try beta.setCloud("after", "written-after-rogue-was-removed")
        _ = try beta.syncOnce()
        _ = try beta.syncOnce()
        let epochs = try itemRecords().compactMap { epoch(of: $0) }
        #expect(!epochs.contains { $0 < 3 }, "beta sealed records under an epoch rogue holds: \(epochs)")
        try takeTheHead(rogue)
        _ = try rogue.syncOnce()
        #expect(try rogue.getCloud("after") == nil, "the removed device read a write made after its removal")
    }

    @Test("a device whose head read came just before another device's new epoch, then met a compaction, is not locked out")
    func aHeadReadRaceThenCompactionIsNoLockout() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta) = (machines[0], machines[1])
        for machine in machines { try machine.round() }
        let engine = try engine(of: beta)
        let before = try engine.state().headRevision
        try alpha.ok(["sync", "remove-device", "rogue"])
        // beta's round read the head (epoch 1), then the lists (epoch 2): it follows epoch 2
        // and keeps the head revision it had, as refreshMembership does when the head it
        // read names an older epoch than the newest list.
        try beta.round()
        var state = try engine.state()
        state.headRevision = before
        try engine.save(state)
        try alpha.setCloud("token", "v1")
        try alpha.round()
        try cluster.compact()
        let met = try beta.syncOnce()
        #expect(met.status == 0, "\(met.status) \(met.stderr)")
    }

    @Test("a junk list of the next epoch, with no key share for any member, does not tell the group's members they were removed")
    func aJunkNextListIsNoRemoval() throws {
        let machines = try group(["alpha", "beta", "rogue"], on: cluster)
        let (alpha, beta) = (machines[0], machines[1])
        for machine in machines { try machine.round() }
        try alpha.ok(["sync", "remove-device", "rogue"])
        try beta.round()
        // rogue, which holds no key of epoch 2, puts bytes at epoch 3's list key.
        let prefix = try engine(of: alpha).state().prefix
        try hostile.put(SyncRecords.membersKey(prefix, epoch: 3), [0, 0, 0, 3] + (0..<200).map { _ in UInt8.random(in: 0...255) })
        for machine in [alpha, beta] {
            let met = try machine.syncOnce()
            let status = try machine.status()
            #expect(status["removed"] as? Bool != true && !met.stderr.contains("was removed"), "\(machine.name): \(met.status) \(met.stderr)")
        }
    }
}
