import Foundation
@_spi(Reliability) import KeychainCore
import KeychainTestSupport

/// Sync against a hostile etcd: over seeded trials, direct edits through etcd's API replay,
/// reorder, move, drop and roll back item records and member lists while devices write, one
/// is removed (and goes on writing, and tries to lead with an epoch of its own) and another
/// joins. A device must never serve a value from the removed device after its removal, nor one
/// it had already replaced (a replay); the removed device must read nothing written after its
/// removal, and no device may follow a list it made; once the edits stop, every remaining
/// device must converge.
enum HostileEtcdCheck {
    /// One device: its vault, its engine, and what it served for each key, and replaced.
    final class Device {
        let name: String
        let vault: Vault
        let engine: SyncEngine
        var served: [String: String] = [:]
        var replaced: [String: Set<String>] = [:]

        init(_ name: String, _ vault: Vault, _ engine: SyncEngine) {
            self.name = name
            self.vault = vault
            self.engine = engine
        }
    }

    static let keys = 6

    static func run(_ env: CheckEnvironment, trials: Int) -> CheckResult {
        var result = CheckResult("sync against a hostile etcd")
        SyncCheck.onCluster(&result) { (cluster, endpoints, result) in
            let etcd = try EtcdRawAccess(endpoints)
            func enroll(_ name: String, joining sponsor: Device?) throws -> Device {
                let vault = try SyncCheck.vault(env, "hostile-\(name)")
                let engine =
                    try sponsor.map { try SyncEngine.join(vault: vault, cluster: endpoints, code: try $0.engine.invite(), deviceName: name) }
                    ?? SyncEngine.create(vault: vault, cluster: endpoints, deviceName: name)
                return Device(name, vault, engine)
            }
            let alpha = try enroll("alpha", joining: nil)
            var live = [alpha, try enroll("beta", joining: alpha)]
            let removed = try enroll("gamma", joining: alpha)
            live.append(removed)
            // Follows no removal before it meets the removed device's own epoch.
            let lagging = try enroll("epsilon", joining: alpha)
            for device in live + [lagging] { _ = try device.engine.syncOnce() }
            var after = Set<String>()
            var removal = RemovalOutcome()
            var rejoins = 0
            var random = SeededRandom(seed: env.seed)
            var history: [EtcdRawAccess.Record] = []
            var seen = Set<[UInt8]>()
            var counts = (writes: 0, evilWrites: 0, replays: 0, reorders: 0, moves: 0, drops: 0, rollbacks: 0, joinsRefused: 0)
            var (evilServed, replayServed, refused, roundErrors) = (0, 0, 0, 0)
            var isRemoved = false
            var sequence = 0

            func write(_ device: Device, _ value: String) throws {
                let key = "k\(random.next() % UInt64(keys))"
                try device.vault.upsert(Item(.genericPassword, attributes: SyncCheck.attributes(key), value: SecretBytes(utf8: value)))
            }
            func pick<T>(_ list: [T]) -> T? { list.isEmpty ? nil : list[Int(random.next() % UInt64(list.count))] }

            for trial in 0..<trials {
                for record in try etcd.records() where seen.insert(record.key + [0] + record.value).inserted { history.append(record) }
                if trial == trials / 3 {
                    try alpha.engine.removeDevice("gamma")
                    live.removeAll { $0 === removed }
                    isRemoved = true
                    removal = try removalAttacks(&live, lagging: lagging, removed: removed, etcd: etcd, after: &after) { device in
                        rejoins += 1
                        try device.engine.leave()
                        let engine = try SyncEngine.join(vault: device.vault, cluster: endpoints, code: try alpha.engine.invite(), deviceName: "epsilon-\(rejoins)")
                        return Device("epsilon-\(rejoins)", device.vault, engine)
                    }
                }
                if trial == trials / 2 {
                    do { live.append(try enroll("delta", joining: alpha)) } catch { counts.joinsRefused += 1 }
                }
                switch random.next() % 10 {
                case 0...3:
                    sequence += 1
                    if isRemoved { after.insert("v\(sequence)") }
                    try write(pick(live)!, "v\(sequence)")
                    counts.writes += 1
                case 4:
                    if let record = pick(history) {
                        try etcd.put(record)
                        counts.replays += 1
                    }
                case 5:
                    // Two values a key held, put back newest first.
                    if let record = pick(history.filter(\.isItem)) {
                        let versions = history.filter { $0.key == record.key }
                        for version in versions.reversed().prefix(2) { try etcd.put(version) }
                        counts.reorders += 1
                    }
                case 6:
                    let items = history.filter(\.isItem)
                    if let from = pick(items), let to = pick(items) {
                        try etcd.put(EtcdRawAccess.Record(key: to.key, value: from.value))
                        counts.moves += 1
                    }
                case 7:
                    if let record = pick(try etcd.records().filter(\.isItem)) {
                        try etcd.delete(record.key)
                        counts.drops += 1
                    }
                case 8:
                    if let list = pick(history.filter(\.isMemberList)) {
                        try etcd.put(list)
                        counts.rollbacks += 1
                    }
                default:
                    // The removed device writes as it did, and syncs when etcd lets it.
                    if isRemoved {
                        sequence += 1
                        try write(removed, "EVIL-\(sequence)")
                        _ = try? removed.engine.syncOnce()
                        removal.readable += readable(removed, after)
                        counts.evilWrites += 1
                    }
                }
                for device in live {
                    do {
                        refused += try device.engine.syncOnce().refused
                    } catch {
                        roundErrors += 1
                    }
                    for index in 0..<keys {
                        guard let value = read(device, "k\(index)") else { continue }
                        let key = "k\(index)"
                        if isRemoved && device !== removed && value.hasPrefix("EVIL-") { evilServed += 1 }
                        if device.replaced[key, default: []].contains(value) {
                            replayServed += 1
                            result.fail("\(device.name) served \(key)'s replaced value again (trial \(trial))")
                        }
                        if let previous = device.served[key], previous != value { device.replaced[key, default: []].insert(previous) }
                        device.served[key] = value
                    }
                }
            }
            // The edits stop: rounds until every remaining device agrees.
            var converged = false
            for _ in 0..<10 where !converged {
                for device in live { _ = try? device.engine.syncOnce() }
                let views = live.map { device in (0..<keys).map { read(device, "k\($0)") } }
                converged = views.allSatisfy { $0 == views[0] } && live.allSatisfy { (try? $0.engine.outboxLength()) == 0 }
            }
            let left = try etcd.records().filter(\.isItem)
            result.figure(
                "trials",
                "\(trials): \(counts.writes) writes by members, \(counts.evilWrites) by the removed device, \(counts.replays) replays, \(counts.reorders) reorders, \(counts.moves) moves, \(counts.drops) drops, \(counts.rollbacks) member-list rollbacks; \(counts.joinsRefused) join refused"
            )
            result.figure("refused", "\(refused) records refused by the remaining devices; \(roundErrors) rounds failed (and were retried)")
            result.figure("served", "\(evilServed) values from the removed device, \(replayServed) replayed values")
            result.figure(
                "removal attacks",
                "\(removal.readable) values written after the removal readable by the removed device; \(removal.followed) devices followed a member list the removed device made; \(rejoins) device joined again after the fork it met"
            )
            if removal.readable > 0 { result.fail("the removed device read \(removal.readable) values written after its removal") }
            if removal.followed > 0 { result.fail("\(removal.followed) devices followed a member list the removed device made") }
            result.figure("converged", converged ? "\(live.count) remaining devices agree on every key, outboxes empty" : "NO")
            if evilServed > 0 { result.fail("\(evilServed) values from the removed device were served") }
            if !converged {
                let views = live.map { device in "\(device.name): " + (0..<keys).map { read(device, "k\($0)") ?? "-" }.joined(separator: " ") }
                result.fail("the remaining devices did not converge: \(views.joined(separator: "; "))")
            }
            let current = try etcd.records().filter(\.isMemberList).compactMap(\.epoch).max() ?? 1
            let retired = left.filter { ($0.epoch ?? 0) < current && !($0.value.isEmpty) }
            result.figure("records left on etcd", "\(left.count) items, \(retired.count) of them under a retired epoch (which the removed device could open)")
        }
        return result
    }

    static func read(_ device: Device, _ key: String) -> String? {
        let query = Query(.genericPassword, attributes: SyncCheck.attributes(key), limit: .one, returnData: true)
        guard let value = (try? device.vault.copyMatching(query))?.first?.value else { return nil }
        return value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
