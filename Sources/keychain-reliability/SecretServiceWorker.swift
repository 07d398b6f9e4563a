import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Children for the Secret Service's time bounds, run against a private daemon (the bus comes
/// from the environment): each prints one line, `elapsed=SECONDS outcome=KIND...`.
enum SecretServiceWorker {
    static func kind(_ error: StoreError?) -> String {
        switch error {
        case nil: "ok"
        case .unavailable?: "unavailable"
        case .outcomeUnknown?: "outcomeUnknown"
        case .partlyApplied?: "partlyApplied"
        case .collectionLocked?: "collectionLocked"
        case let other?: "other(\(other))"
        }
    }

    /// `callers` concurrent reads on Dispatch's global pool, each with `timeout` seconds;
    /// reports the longest any of them took.
    static func concurrentCallers(callers: Int, timeout: Double) throws -> Int32 {
        let store = try SecretServiceStore(.init(timeout: .milliseconds(Int(timeout * 1000))))
        let group = DispatchGroup()
        let results = Collector<(Double, String)>()
        for index in 0..<callers {
            group.enter()
            DispatchQueue.global().async {
                let start = Date()
                var failure: StoreError?
                do throws(StoreError) { _ = try store.contains(Query(.genericPassword, attributes: Attributes(service: "bound", account: "\(index)"))) } catch { failure = error }
                results.add((Date().timeIntervalSince(start), kind(failure)))
                group.leave()
            }
        }
        group.wait()
        let all = results.all
        let longest = all.map(\.0).max() ?? 0
        print("elapsed=\(String(format: "%.3f", longest)) outcome=\(Set(all.map(\.1)).sorted().joined(separator: ","))")
        return 0
    }

    /// One batch of `count` adds while the daemon `pid` is stopped after `freezeAfter`
    /// seconds; reports how long the batch took and how it ended.
    static func frozenBatch(daemon pid: pid_t, count: Int, timeout: Double, freezeAfter: Double) throws -> Int32 {
        let store = try SecretServiceStore(.init(timeout: .milliseconds(Int(timeout * 1000)), partition: "frozen-batch"))
        _ = try store.probe()
        let operations = (0..<count).map { WriteOperation.add(Item(.genericPassword, attributes: Attributes(service: "batch", account: "\($0)"), value: SecretBytes(utf8: "v"))) }
        DispatchQueue.global().asyncAfter(deadline: .now() + freezeAfter) { kill(pid, SIGSTOP) }
        let start = Date()
        var failure: StoreError?
        do throws(StoreError) { try store.write(operations) } catch { failure = error }
        let elapsed = Date().timeIntervalSince(start)
        // The daemon answers again: the next call re-checks an unconfirmed write.
        kill(pid, SIGCONT)
        _ = try? store.probe()
        let rechecked = store.takeRecheckedWrites()
        print("elapsed=\(String(format: "%.3f", elapsed)) outcome=\(kind(failure)) rechecked=\(rechecked.count)")
        return 0
    }
}
