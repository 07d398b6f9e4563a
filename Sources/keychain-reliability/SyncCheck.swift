import Foundation
import KeychainCore
import KeychainTestSupport

/// Sync with a member killed mid-run: two vaults of one group on a 3-member etcd cluster of
/// the check's own; a member is SIGKILLed between rounds while writes go on; every item must
/// arrive with its last value, and the restarted member must serve the rest.
enum SyncCheck {
    static func run(_ env: CheckEnvironment, items: Int) -> CheckResult {
        var result = CheckResult("sync through etcd with a member killed")
        SyncCheck.onCluster(&result) { (cluster, endpoints, result) in
            let a = try vault(env, "sync-a")
            let b = try vault(env, "sync-b")
            let alpha = try SyncEngine.create(vault: a, cluster: endpoints, deviceName: "alpha")
            let beta = try SyncEngine.join(vault: b, cluster: endpoints, code: try alpha.invite(), deviceName: "beta")
            var random = SeededRandom(seed: env.seed)
            var expected: [String: String] = [:]
            func write(_ count: Int) throws {
                for _ in 0..<count {
                    let key = "k\(random.next() % UInt64(items))"
                    let value = "v\(random.next())"
                    try a.upsert(Item(.genericPassword, attributes: attributes(key), value: SecretBytes(utf8: value)))
                    expected[key] = value
                }
            }
            try write(items)
            try alpha.syncOnce()
            try cluster.kill(Int(random.next() % 3) + 1)
            let started = ContinuousClock.now
            try write(items)
            let sent = try alpha.syncOnce().sent
            let received = try beta.syncOnce().received
            result.figure("with a member killed", "\(sent) changes sent and \(received) received in \(Int(started.secondsSince * 1_000)) ms")
            for (key, value) in expected {
                let got = try? b.copyMatching(Query(.genericPassword, attributes: attributes(key), limit: .one, returnData: true)).first?.value
                if got != SecretBytes(utf8: value) { result.fail("\(key) did not arrive with its last value") }
            }
            if try alpha.outboxLength() != 0 { result.fail("the outbox was not empty after a round") }
            result.figure("items", "\(expected.count) distinct items, \(2 * items) writes, all arrived")
        }
        return result
    }

    /// Runs `body` on a 3-member loopback etcd cluster of the check's own, stopped afterwards:
    /// the check is skipped where etcd is not installed, and fails with what `body` throws.
    static func onCluster(_ result: inout CheckResult, _ body: (EtcdCluster, SyncCluster, inout CheckResult) throws -> Void) {
        if let reason = EtcdCluster.unavailableReason {
            result.skipped = reason
            return
        }
        do {
            let cluster = try EtcdCluster()
            defer { cluster.stop() }
            try body(cluster, SyncCluster(endpoints: cluster.endpoints.components(separatedBy: ",")), &result)
        } catch {
            result.fail("sync failed: \(error)")
        }
    }

    static func attributes(_ key: String) -> Attributes {
        Attributes(service: "reliability", account: key, synchronizable: true, accessibility: .afterFirstUnlock)
    }

    static func vault(_ env: CheckEnvironment, _ name: String) throws -> Vault {
        try Vault(
            VaultConfiguration(location: VaultLocation(path: env.directory(name) + "/sync.keychain"), usesKernelKeyring: false, syncsInBackground: false))
    }
}
