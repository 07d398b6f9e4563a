import Foundation
import KeychainTestSupport

/// `keychain serve` against gnome-keyring-daemon in one run, each alone on a private session
/// bus whose default collection holds the same items, timed through the same client calls
/// (Benchmarks/secret_service_compare.py): a store (`CreateItem`), a `SearchItems`, and a
/// `secret-tool lookup` per call.
struct ServeBench {
    /// A Python with `secretstorage` (and the `cryptography` it brings).
    let python: String
    let scratch: String
    let runs: Int

    static let benchmarks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Benchmarks").standardized.path
    static let secretServiceScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/secret-service.sh").standardized.path
    static let peer = "gnome-keyring-daemon"

    /// Why the comparison cannot run here, or nil.
    static func unavailableReason(python: String?) -> String? {
        for tool in ["dbus-daemon", "dbus-send", "secret-tool", "gnome-keyring-daemon"] where Peers.which(tool) == nil {
            return "\(tool) is not installed (apt-get install dbus libsecret-tools gnome-keyring)"
        }
        guard let python, (try? Peers.run(python, ["-c", "import secretstorage"])) != nil else {
            return "Python secretstorage is not installed (--install-peers puts it in a private virtual environment)"
        }
        return nil
    }

    /// The comparison on collections of each of `sizes` items, and the targets of issue 35
    /// checked against it: at the smallest, every figure at least the peer's; at the largest, a
    /// store and a search at least 10 times the peer's rate, and neither slower than at the
    /// smallest by more than half.
    static func compare(python: String?, scratch: String, runs: Int, sizes: [Int], into report: inout Report) {
        if let reason = unavailableReason(python: python) {
            report.skipped["keychain serve against \(peer)"] = reason
            return
        }
        let bench = ServeBench(python: python!, scratch: scratch, runs: runs)
        var bySize: [Int: [Measurement]] = [:]
        for size in sizes {
            FileHandle.standardError.write(Data("· keychain serve against \(peer), \(size.formatted())-item collections\n".utf8))
            do {
                bySize[size] = try bench.measure(size: size)
                report.measurements += bySize[size]!
            } catch {
                report.skipped["keychain serve against \(peer), \(size.formatted()) items"] = "\(error)"
            }
        }
        func ours(_ size: Int, _ call: String) -> Measurement? { bySize[size]?.first { $0.name == "keychain serve: \(call)" } }
        guard let small = sizes.first, let large = sizes.last else { return }
        /// Ours at `size` against the peer's rate, `times` or more.
        func faster(_ size: Int, _ call: String, times: Double) {
            guard let measured = ours(size, call), let ratio = measured.ratio else { return }
            report.targets.append(
                .init(
                    goal: "keychain serve \(call) at \(size.formatted()) items at least \(times == 1 ? "as fast as \(peer)" : "\(Int(times))x \(peer)'s rate")",
                    measured: String(format: "%.2fx its rate (%.2f ms against %.2f ms)", ratio, measured.microseconds / 1000, measured.microseconds * ratio / 1000),
                    met: ratio >= times))
        }
        for (_, call) in calls { faster(small, call, times: 1) }
        for (_, call) in calls.prefix(2) where large != small {
            faster(large, call, times: 10)
            if let atLarge = ours(large, call), let atSmall = ours(small, call) {
                let growth = atSmall.median / atLarge.median
                report.targets.append(
                    .init(
                        goal: "keychain serve \(call) at \(large.formatted()) items within 1.5x of its time at \(small)",
                        measured: String(format: "%.2fx (%.2f ms against %.2f ms)", growth, atLarge.microseconds / 1000, atSmall.microseconds / 1000),
                        met: growth <= 1.5))
            }
        }
    }

    /// Both providers' figures for a collection of `size` items, ours compared with the peer's.
    func measure(size: Int) throws -> [Measurement] {
        // A store into a large gnome-keyring rewrites its whole file: seconds each.
        let operations = 20, stores = size > 1_000 ? 5 : 20
        let theirs = try gnomeKeyring(size: size, operations: operations, stores: stores)
        let ours = try served(size: size, operations: operations, stores: stores)
        let group = "Secret Service providers, \(size.formatted())-item collection"
        var measurements: [Measurement] = []
        for (key, call) in Self.calls {
            guard let ourRates = ours[key], let theirRates = theirs[key] else { throw BenchError("no \(key) figures") }
            let peer = Measurement(name: "\(Self.peer): \(call)", group: group, rates: theirRates)
            var measured = Measurement(name: "keychain serve: \(call)", group: group, rates: ourRates)
            measured.comparedWith = "times \(Self.peer)'s rate"
            measured.ratio = measured.median / peer.median
            measurements += [measured, peer]
        }
        return measurements
    }

    /// The figures' keys in the script's output, and what each times.
    static let calls = [
        ("store", "CreateItem (store, replace)"), ("search", "SearchItems (service, account)"), ("lookup", "secret-tool lookup (process/call)"),
    ]

    private func rates(_ environment: [String: String], size: Int, operations: Int, stores: Int) throws -> [String: [Double]] {
        let output = try Peers.run(
            python, [Self.benchmarks + "/secret_service_compare.py", "measure", String(size), String(runs), String(operations), String(stores)],
            environment: environment)
        guard let rates = try JSONSerialization.jsonObject(with: output) as? [String: [Double]] else {
            throw BenchError("secret_service_compare.py printed no figures")
        }
        return rates
    }

    /// gnome-keyring-daemon over a login keyring written with `size` items before it starts
    /// (through its API, each store rewriting the file, 10,000 items would take most of an hour).
    private func gnomeKeyring(size: Int, operations: Int, stores: Int) throws -> [String: [Double]] {
        let directory = "\(scratch)/gnome-keyring-\(size)"
        let password = "keychain-bench"
        try Peers.run(python, [Self.benchmarks + "/gnome_keyring_file.py", directory + "/data/keyrings/login.keyring", password, String(size)])
        // Through Subprocess, whose pipes close on exec: the daemons the script starts would
        // keep a pipe of Foundation's Process open, and its output would never end.
        let started = try Subprocess.run(
            "/bin/bash", [Self.secretServiceScript, "start", directory], environment: ["PATH": "/usr/bin:/bin", "SECRET_SERVICE_PASSWORD": password])
        defer { _ = try? Subprocess.run("/bin/bash", [Self.secretServiceScript, "stop", directory], environment: ["PATH": "/usr/bin:/bin"]) }
        guard started.status == 0 else { throw BenchError("scripts/secret-service.sh failed: \(started.stderr)") }
        let exports = started.output
        guard let line = exports.split(separator: "\n").first(where: { $0.hasPrefix("export DBUS_SESSION_BUS_ADDRESS=") }) else {
            throw BenchError("scripts/secret-service.sh started no bus")
        }
        let bus = line.dropFirst("export DBUS_SESSION_BUS_ADDRESS=".count).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        return try rates(
            ["PATH": "/usr/bin:/bin", "HOME": directory + "/home", "DBUS_SESSION_BUS_ADDRESS": bus], size: size, operations: operations, stores: stores)
    }

    /// `keychain serve` (the command beside this benchmark) over a new vault, filled with the
    /// same items through CreateItem.
    private func served(size: Int, operations: Int, stores: Int) throws -> [String: [Double]] {
        let served = try ServedVault()
        try Peers.run(python, [Self.benchmarks + "/secret_service_compare.py", "fill", String(size)], environment: served.environment)
        return try rates(served.environment, size: size, operations: operations, stores: stores)
    }
}
