import Foundation
@_spi(Benchmark) import KeychainCore
import KeychainTestSupport

/// Sync's propagation from one machine's write to another's read, next to etcd's own
/// put-to-watch latency on the same cluster, and the first sync of a large group.
enum SyncBench {
    static func measure(scratch: String, writes: Int, items: Int) throws -> [Measurement] {
        // The same steps twice, each on a fresh cluster of its own (a cluster that already
        // holds one group's history is slower for the next): with engines that neither sign
        // nor check signatures (what sync cost before them), then as shipped.
        var floor: [Double] = []
        let before = try onFreshCluster { endpoints in
            floor = try EtcdProbe.putToWatchLatencies(endpoints, count: writes)
            return try group(scratch: scratch, name: "unsigned", endpoints: endpoints, writes: writes, items: items, withoutSignatures: true)
        }
        let after = try onFreshCluster { endpoints in
            try group(scratch: scratch, name: "signed", endpoints: endpoints, writes: writes, items: items, withoutSignatures: false)
        }

        let propagation = "sync: propagation through a 3-member etcd cluster"
        let large = "sync: a group of \(items.formatted()) items"
        let baseline = "before signatures"
        return [
            Measurement(
                name: "etcd put to watch event (floor)", group: propagation, rates: floor.map { 1 / $0 },
                note: "median \(ms(median(floor))), p99 \(ms(p99(floor))) over \(writes) puts"),
            Measurement(
                name: "write to read on another, before signatures", group: propagation, rates: before.latencies.map { 1 / $0 },
                note: "median \(ms(median(before.latencies))), p99 \(ms(p99(before.latencies)))", comparedWith: "etcd's own put-to-watch",
                ratio: median(before.latencies) / median(floor)),
            Measurement(
                name: "write on one machine to read on another", group: propagation, rates: after.latencies.map { 1 / $0 },
                note: "median \(ms(median(after.latencies))), p99 \(ms(p99(after.latencies))) over \(writes) writes", comparedWith: baseline,
                ratio: median(after.latencies) / median(before.latencies)),
            Measurement(
                name: "send \(items.formatted()) new items, before signatures", group: large, rates: [1 / before.push],
                note: String(format: "%.2f s", before.push)),
            Measurement(
                name: "send \(items.formatted()) new items (one round)", group: large, rates: [1 / after.push], note: String(format: "%.2f s", after.push),
                comparedWith: baseline, ratio: after.push / before.push),
            Measurement(
                name: "first sync of a new machine, before signatures", group: large, rates: [1 / before.firstSync],
                note: String(format: "%.2f s", before.firstSync)),
            Measurement(
                name: "first sync of a new machine (join + round)", group: large, rates: [1 / after.firstSync],
                note: String(format: "%.2f s for %@ items", after.firstSync, items.formatted()), comparedWith: baseline,
                ratio: after.firstSync / before.firstSync),
        ]
    }

    private static func onFreshCluster<R>(_ body: (SyncCluster) throws -> R) throws -> R {
        let cluster = try EtcdCluster()
        defer { cluster.stop() }
        return try body(SyncCluster(endpoints: cluster.endpoints.components(separatedBy: ",")))
    }

    /// Propagation latencies (seconds), then the time to send `items` new items and a new
    /// machine's first sync of them, in a new group of two machines.
    private static func group(
        scratch: String, name: String, endpoints: SyncCluster, writes: Int, items: Int, withoutSignatures: Bool
    ) throws -> (latencies: [Double], push: Double, firstSync: Double) {
        func vault(_ device: String) throws -> Vault {
            try Vault(VaultConfiguration(location: VaultLocation(path: "\(scratch)/sync-\(name)-\(device).keychain"), usesKernelKeyring: false, syncsInBackground: false))
        }
        let a = try vault("a")
        let b = try vault("b")
        _ = try SyncEngine.create(vault: a, cluster: endpoints, deviceName: "alpha")
        let alpha = try SyncEngine(vault: a, withoutSignatures: withoutSignatures)
        _ = try SyncEngine.join(vault: b, cluster: endpoints, code: try alpha.invite(), deviceName: "beta")
        let beta = try SyncEngine(vault: b, withoutSignatures: withoutSignatures)

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
        let push = Double(Clock.now() - started) / 1e9
        let c = try vault("c")
        let code = try alpha.invite()
        started = Clock.now()
        _ = try SyncEngine.join(vault: c, cluster: endpoints, code: code, deviceName: "gamma")
        let round = try SyncEngine(vault: c, withoutSignatures: withoutSignatures).syncOnce()
        let firstSync = Double(Clock.now() - started) / 1e9
        guard round.received >= items else { throw SyncError.malformed("the first sync received \(round.received) of \(items) items") }
        return (latencies, push, firstSync)
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    static func p99(_ values: [Double]) -> Double { values.sorted()[min(values.count - 1, values.count * 99 / 100)] }
    static func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1_000) }

    private final class Stop: @unchecked Sendable { var value = false }
}
