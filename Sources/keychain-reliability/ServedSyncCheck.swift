import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Served items through etcd with the sender killed mid-push: two machines (each its own home,
/// bus and `keychain serve`) of one sync group on a 3-member etcd cluster of the check's own.
/// The sender stores hundreds of items in its `sync` collection while the cluster is away; its
/// push (`keychain sync run --once`) is then SIGKILLed again and again, each time as it is about
/// to make a request to etcd chosen by the seed, and finally left to finish. After every kill
/// the receiver lists only whole items (each one's secret served, each one found by searches on
/// its attributes) and holds no row of an item it does not list; at the end it holds every item,
/// and so does a third machine that joins afterwards and gets what etcd holds.
enum ServedSyncCheck {
    /// The attribute pairs of every item the sender stores (`team`, `n`, `host`).
    static let pairsPerItem = 3

    static func run(_ env: CheckEnvironment, items: Int, kills: Int) -> CheckResult {
        var result = CheckResult("served items through etcd, the sender killed mid-push")
        if let reason = ServedVault.unavailableReason {
            result.skip(reason)
            return result
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else {
            result.skip("strace is not installed (apt-get install strace)")
            return result
        }
        guard FileManager.default.isExecutableFile(atPath: KeychainExecutable.path) else {
            result.fail("the keychain command is not built beside this program (\(KeychainExecutable.path)): swift build --product keychain")
            return result
        }
        SyncCheck.onCluster(&result) { cluster, _, result in
            try check(env, cluster: cluster, items: items, kills: kills, &result)
        }
        return result
    }

    private static func check(_ env: CheckEnvironment, cluster: EtcdCluster, items: Int, kills: Int, _ result: inout CheckResult) throws {
        let alpha = try ServedMachine(), beta = try ServedMachine()
        try alpha.ok(["sync", "init", "--endpoints", cluster.endpoints, "--name", "alpha"])
        let code = try alpha.ok(["sync", "invite"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try beta.ok(["sync", "join", "--endpoints", cluster.endpoints, "--name", "beta"], input: code + "\n")
        try alpha.serve()
        try beta.serve()

        // Stored while the cluster is away (paused), so that every item waits in beta's
        // outbox; beta's daemon stops before the cluster comes back, so that only the killed
        // runs below send.
        let storing = ContinuousClock.now
        for member in 1...3 { try cluster.pause(member) }
        let stored = try beta.served.run(
            "/bin/sh",
            [
                "-c",
                "i=0; while [ $i -lt \(items) ]; do printf s$i | secret-tool store --label=item$i --collection=sync team rel n $i host h$i || exit 1; i=$((i+1)); done",
            ])
        beta.served.stopServing()
        for member in 1...3 { try cluster.resume(member) }
        guard stored.status == 0 else { throw FileTrace.Failure(description: "storing the items failed: \(stored.stderr) \(beta.served.serveErrors)") }
        result.figure("stored", "\(items) items of \(pairsPerItem) attributes each, through beta's daemon, in \(Int(storing.secondsSince * 1_000)) ms")

        // A push writes the outbox in transactions of at most 128 rows (whole items each),
        // with a few requests before and around each: each run is killed at a request drawn
        // from about as many as its push makes, so that now and then one finishes.
        var random = SeededRandom(seed: env.seed)
        var rounds: [String] = []
        var finished = false
        let pushing = ContinuousClock.now
        for round in 1...kills where !finished {
            // The outbox keeps what a killed run sent (a run empties it as it ends); what
            // alpha lacks is what the next run still writes.
            let waiting = try outboxLength(beta)
            if waiting == 0 { break }
            let unsent = (items - (try ServedRowCensus(alpha.served.vaultPath).items.count)) * (2 + pairsPerItem)
            // The first run's points stop short of its push's end: at least one kill falls in a push.
            let point = 1 + Int(random.next() % UInt64((round == 1 ? 2 : 3) * (unsent / 128) + 6))
            finished = try push(beta, killedAt: point)
            settle(alpha)
            let listed = try inspect(alpha, expected: nil, random: &random, "after the kill at request \(point) of run \(round)", &result)
            try inspect(beta, expected: items, random: &random, "on the sender, after the kill at request \(point) of run \(round)", &result, viaBus: false)
            rounds.append(
                finished ? "run \(round) finished before request \(point)" : "killed at request \(point) with \(waiting) rows in the outbox: alpha lists \(listed)")
        }
        result.figure("kills", rounds.joined(separator: "; "))
        if !rounds.contains(where: { $0.hasPrefix("killed") }) { result.fail("no kill fell in the push: \(rounds)") }
        guard try push(beta, killedAt: nil) else { throw FileTrace.Failure(description: "beta's last push did not finish") }
        if !(try eventually { try ServedRowCensus(alpha.served.vaultPath).items.count >= items }) {
            result.fail("alpha did not get every item once beta's push finished")
        }
        let killed = rounds.filter { $0.hasPrefix("killed") }.count
        result.figure("push", "\(items) items whole on alpha \(Int(pushing.secondsSince * 1_000)) ms after the first run started, \(killed) runs killed before")
        try inspect(alpha, expected: items, random: &random, "once the dust settled", &result)
        try inspect(beta, expected: items, random: &random, "on the sender, once the dust settled", &result, viaBus: false)
        let waiting = try outboxLength(beta)
        if waiting != 0 { result.fail("\(waiting) rows wait in beta's outbox once its push finished") }

        // What etcd holds: what a machine that joins now gets.
        let gamma = try ServedMachine()
        let invitation = try alpha.ok(["sync", "invite"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try gamma.ok(["sync", "join", "--endpoints", cluster.endpoints, "--name", "gamma"], input: invitation + "\n")
        try gamma.ok(["sync", "run", "--once"])
        try inspect(gamma, expected: items, random: &random, "on a machine that joined afterwards (what etcd holds)", &result, viaBus: false)
    }

    /// Runs beta's sender (`keychain sync run --once`), killed (SIGKILL, by strace) as it is about
    /// to make its `point`-th request; whether it finished before.
    private static func push(_ machine: ServedMachine, killedAt point: Int?) throws -> Bool {
        let environment = machine.served.environment.merging(ServedMachine.environment) { $1 }
        let run =
            if let point {
                try Subprocess.run(
                    "/usr/bin/strace",
                    [
                        "-f", "-qq", "-o", "/dev/null", "-e", "trace=sendto", "-e", "inject=sendto:signal=SIGKILL:when=\(point)", KeychainExecutable.path, "sync",
                        "run", "--once",
                    ], environment: environment)
            } else {
                try Subprocess.run(KeychainExecutable.path, ["sync", "run", "--once"], environment: environment)
            }
        return run.status == 0
    }

    /// How many rows wait in the machine's outbox.
    private static func outboxLength(_ machine: ServedMachine) throws -> Int {
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: machine.served.vaultPath), usesKernelKeyring: false, syncsInBackground: false))
        return try SyncEngine(vault: vault).outboxLength()
    }

    /// Waits until the receiver's daemon has applied what arrived: its rows unchanged for a
    /// while (watch events come in a moment after the sender's transactions).
    private static func settle(_ machine: ServedMachine) {
        var last: (Int, Int, Int) = (-1, -1, -1)
        for _ in 0..<40 {
            usleep(250_000)
            guard let census = try? ServedRowCensus(machine.served.vaultPath) else { continue }
            let now = (census.items.count, census.secrets.count, census.pairs.values.reduce(0, +))
            if now == last { return }
            last = now
        }
    }

    /// Checks one machine's `sync` collection: no half item and no orphan row in its vault,
    /// `expected` items when given; through its daemon (`viaBus`), the listed items are the
    /// vault's, a search on the pair all items carry finds each with its own secret, and
    /// lookups on the pair only one item carries find it. Returns how many items it lists.
    @discardableResult
    private static func inspect(
        _ machine: ServedMachine, expected: Int?, random: inout SeededRandom, _ when: String, _ result: inout CheckResult, viaBus: Bool = true
    ) throws -> Int {
        let census = try ServedRowCensus(machine.served.vaultPath)
        let half = census.halfItems(pairsPerItem: pairsPerItem)
        if !half.isEmpty { result.fail("\(when): \(half.count) half items of \(census.items.count) in the vault") }
        if !census.orphans.isEmpty { result.fail("\(when): rows of \(census.orphans.count) items the vault does not list") }
        if let expected, census.items.count != expected { result.fail("\(when): \(census.items.count) items, not \(expected)") }
        guard viaBus else { return census.items.count }
        let listed = Set(try machine.items(of: "sync"))
        if listed != census.items { result.fail("\(when): the daemon lists \(listed.count) items, the vault holds \(census.items.count) records") }
        let found = try machine.search(["team", "rel"])
        if Set(found.keys) != listed { result.fail("\(when): a search on the pair every item carries finds \(found.count) of the \(listed.count) listed") }
        // Each item's label is `item<n>`, its secret `s<n>`.
        let numbers = found.values.compactMap { $0.label.flatMap { $0.hasPrefix("item") ? String($0.dropFirst(4)) : nil } }.sorted()
        let wrong = found.values.filter { item in item.secret == nil || item.secret != item.label.map { "s" + $0.dropFirst(4) } }
        if !wrong.isEmpty { result.fail("\(when): \(wrong.count) items found without their own secret") }
        for _ in 0..<min(3, numbers.count) {
            let n = numbers[Int(random.next() % UInt64(numbers.count))]
            let lookup = try machine.secretTool(["lookup", "n", n, "host", "h" + n])
            if lookup.status != 0 || lookup.output != "s" + n { result.fail("\(when): a lookup of item \(n) by its own pairs did not find its secret") }
        }
        return listed.count
    }

}
