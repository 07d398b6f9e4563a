import Dispatch
import Synchronization

/// etcd's own latency from a put to the watch event it causes, on a cluster: the floor the
/// benchmark sets sync's propagation against. Not API.
@_spi(Benchmark) public enum EtcdProbe {
    /// Seconds from each of `count` puts (one at a time, 64-byte values) to its watch event.
    public static func putToWatchLatencies(_ cluster: SyncCluster, count: Int) throws(SyncError) -> [Double] {
        let client = try EtcdClient(cluster.configuration)
        let prefix = Array("/probe/\(DispatchTime.now().uptimeNanoseconds)/".utf8)
        let start = try client.range(prefix).revision
        let arrived = DispatchSemaphore(value: 0)
        let done = Atomic(false)
        DispatchQueue(label: "keychain.probe.watch").async {
            try? client.watch(prefix: prefix, startRevision: start + 1, idleSeconds: 10) { event in
                if case .changed = event { arrived.signal() }
                return !done.load(ordering: .relaxed)
            }
        }
        var latencies: [Double] = []
        let value = [UInt8](repeating: 0x61, count: 64)
        for index in 0..<count {
            let sent = DispatchTime.now().uptimeNanoseconds
            try client.put(prefix + Array("\(index)".utf8), value)
            guard arrived.wait(timeout: .now() + .seconds(10)) == .success else { throw .unreachable("no watch event within 10 s") }
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - sent) / 1e9)
        }
        done.store(true, ordering: .relaxed)
        try client.put(prefix + Array("end".utf8), value)
        _ = try? client.delete(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix))
        return latencies
    }
}
