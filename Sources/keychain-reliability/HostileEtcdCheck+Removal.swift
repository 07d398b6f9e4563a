import Foundation
@_spi(Reliability) import KeychainCore

/// The ways a removed device could go on reading what the group writes, tried right after
/// alpha removes gamma and before the other devices have followed: gamma, with write access
/// to etcd, deletes the new epoch's list and shares before a device that has not followed the
/// removal writes (the write must be held), such a device writes at once (its write must be
/// sealed under the new epoch, not the key gamma holds), and gamma deletes the new epoch's
/// list and starts an epoch of its own (no device may follow it).
extension HostileEtcdCheck {
    /// What the attacks achieved: values written after the removal that gamma could read,
    /// and devices that followed a list gamma made.
    struct RemovalOutcome {
        var readable = 0
        var followed = 0
    }

    /// Runs both attacks on `live` (alpha first; `lagging` has not followed the removal and
    /// is replaced by a new device of the same vault when it ends on the other history),
    /// then resolves the fork on alpha as a person would. Values written after the removal
    /// are `after`; gamma's reads of them are counted.
    static func removalAttacks(
        _ live: inout [Device], lagging: Device, removed: Device, etcd: EtcdRawAccess, after: inout Set<String>,
        rejoin: (Device) throws -> Device
    ) throws -> RemovalOutcome {
        var outcome = RemovalOutcome()
        let alpha = live[0]
        // 1. gamma, with write access to etcd, deletes the new epoch's list and key shares
        // before a device that has not followed the removal writes: the write is held (a
        // list of the next epoch was there and is gone), not sealed under the key gamma holds.
        try deleteEpoch(2, etcd)
        after.insert("held-after-removal")
        try lagging.vault.upsert(Item(.genericPassword, attributes: SyncCheck.attributes("k1"), value: SecretBytes(utf8: "held-after-removal")))
        _ = lagging.engine.sendNow(within: 10_000)
        _ = try? removed.engine.syncOnce()
        outcome.readable += readable(removed, after)
        // alpha's next round puts the list back with its key shares.
        _ = try? alpha.engine.syncOnce()
        // 2. A device that has not followed the removal writes at once.
        let writer = live[1]
        after.insert("after-removal")
        try writer.vault.upsert(Item(.genericPassword, attributes: SyncCheck.attributes("k0"), value: SecretBytes(utf8: "after-removal")))
        _ = writer.engine.sendNow(within: 10_000)
        // 3. gamma is shown the lists from before its removal, and reads what it can.
        try deleteEpoch(2, etcd)
        _ = try? removed.engine.syncOnce()
        outcome.readable += readable(removed, after)
        // 4. gamma starts an epoch 2 of its own, without alpha; the device that has not
        // caught up, and the others, meet it.
        // Its own client refuses (it sees the epoch head moved past it); gamma uses one of its own.
        _ = try? removed.engine.startEpochIgnoringTheGroup(removing: "alpha")
        for device in live + [lagging] { _ = try? device.engine.syncOnce() }
        for device in live + [lagging] {
            guard let status = try? device.engine.status() else { continue }
            if status.epoch >= 2, !status.members.isEmpty, !status.members.contains(where: { $0.name == "alpha" }) { outcome.followed += 1 }
        }
        _ = try? removed.engine.syncOnce()
        outcome.readable += readable(removed, after)
        // 5. A person resolves it on alpha; the device that could not follow joins again.
        try alpha.engine.resolveFork()
        for device in live { _ = try? device.engine.syncOnce() }
        if (try? lagging.engine.membershipAlarm())??.kind == .forkedHistory { live.append(try rejoin(lagging)) } else { live.append(lagging) }
        return outcome
    }

    /// Deletes the member list of `epoch` and its key shares, as gamma can on a cluster
    /// without authentication.
    static func deleteEpoch(_ epoch: UInt32, _ etcd: EtcdRawAccess) throws {
        let records = try etcd.records().filter {
            ($0.isMemberList && $0.epoch == epoch) || ($0.isKeyShare && String(decoding: $0.key, as: UTF8.self).contains("/k/\(epoch)/"))
        }
        for record in records { try etcd.delete(record.key) }
    }

    /// How many values of `after` gamma serves.
    static func readable(_ removed: Device, _ after: Set<String>) -> Int {
        (0..<keys).filter { read(removed, "k\($0)").map(after.contains) ?? false }.count
    }
}
