import Foundation
@_spi(Benchmark) import KeychainCore
import KeychainTestSupport

/// Sync's propagation from one machine's write to another's read, next to etcd's own
/// put-to-watch latency on the same cluster, and the first sync of a large group.
enum SyncBench {
    static func measure(scratch: String, writes: Int, items: Int) throws -> [Measurement] {
        let cluster = try EtcdCluster()
        defer { cluster.stop() }
        let endpoints = SyncCluster(endpoints: cluster.endpoints.components(separatedBy: ","))
        func vault(_ name: String) throws -> Vault {
            try Vault(VaultConfiguration(location: VaultLocation(path: "\(scratch)/sync-\(name).keychain"), usesKernelKeyring: false, syncsInBackground: false))
        }
        let a = try vault("a")
        let b = try vault("b")
        let alpha = try SyncEngine.create(vault: a, cluster: endpoints, deviceName: "alpha")
        let beta = try SyncEngine.join(vault: b, cluster: endpoints, code: try alpha.invite(), deviceName: "beta")

        let floor = try EtcdProbe.putToWatchLatencies(endpoints, count: writes)
        let stop = Stop()
        for engine in [alpha, beta] { DispatchQueue(label: "bench.sync").async { engine.run(until: { stop.value }) } }
        usleep(300_000)
        var latencies: [Double] = []
        let attributes = Attributes(service: "bench", account: "propagated", synchronizable: true, accessibility: .afterFirstUnlock)
        let query = Query(.genericPassword, attributes: attributes, limit: .one, returnData: true)
        for index in 0..<writes {
            let value = SecretBytes(utf8: "value-\(index)")
            let sent = Clock.now()
            try a.upsert(Item(.genericPassword, attributes: attributes, value: value))
            while (try? b.copyMatching(query).first?.value) != value {
                if Clock.now() - sent > 10_000_000_000 { throw SyncError.unreachable("write \(index) did not arrive within 10 s") }
                usleep(20)
            }
            latencies.append(Double(Clock.now() - sent) / 1e9)
        }
        stop.value = true
        usleep(300_000)

        let ours = Measurement(
            name: "write on one machine to read on another", group: "sync: propagation through a 3-member etcd cluster",
            rates: latencies.map { 1 / $0 }, note: "median \(ms(median(latencies))), p99 \(ms(p99(latencies))) over \(writes) writes",
            comparedWith: "etcd's own put-to-watch", ratio: median(latencies) / median(floor))
        let etcd = Measurement(
            name: "etcd put to watch event (floor)", group: "sync: propagation through a 3-member etcd cluster",
            rates: floor.map { 1 / $0 }, note: "median \(ms(median(floor))), p99 \(ms(p99(floor))) over \(writes) puts")

        // A group of `items` items: sent from the first machine, then a new machine joins and
        // takes them all in its first round.
        var batch: [WriteOperation] = []
        for index in 0..<items {
            batch.append(
                .upsert(
                    Item(
                        .genericPassword, attributes: Attributes(service: "bench-bulk", account: "item\(index)", synchronizable: true, accessibility: .afterFirstUnlock),
                        value: SecretBytes(utf8: "bulk-value-\(index)"))))
        }
        try a.write(batch)
        var started = Clock.now()
        try alpha.syncOnce()
        let pushSeconds = Double(Clock.now() - started) / 1e9
        let c = try vault("c")
        let code = try alpha.invite()
        started = Clock.now()
        let gamma = try SyncEngine.join(vault: c, cluster: endpoints, code: code, deviceName: "gamma")
        let round = try gamma.syncOnce()
        let firstSync = Double(Clock.now() - started) / 1e9
        guard round.received >= items else { throw SyncError.malformed("the first sync received \(round.received) of \(items) items") }
        return [
            etcd, ours,
            Measurement(
                name: "send \(items.formatted()) new items (one round)", group: "sync: a group of \(items.formatted()) items", rates: [1 / pushSeconds],
                note: String(format: "%.2f s", pushSeconds)),
            Measurement(
                name: "first sync of a new machine (join + round)", group: "sync: a group of \(items.formatted()) items", rates: [1 / firstSync],
                note: String(format: "%.2f s for %@ items", firstSync, round.received.formatted())),
        ]
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    static func p99(_ values: [Double]) -> Double { values.sorted()[min(values.count - 1, values.count * 99 / 100)] }
    static func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1_000) }

    private final class Stop: @unchecked Sendable { var value = false }
}
