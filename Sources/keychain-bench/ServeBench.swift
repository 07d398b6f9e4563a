import Foundation
import KeychainTestSupport

/// `keychain serve` against gnome-keyring-daemon in one run, each alone on a private session
/// bus whose default collection holds the same items, timed through the same client calls
/// (Benchmarks/secret_service_compare.py): a store (`CreateItem`), a `SearchItems`, and a
/// `secret-tool lookup` per call; and how long each takes from its start, unlocking its
/// passphrase-protected store, to the first `SearchItems` answer (ours started by the bus at
/// that call, as D-Bus activation does; gnome-keyring started with `--unlock`, which its
/// activation cannot do).
struct ServeBench {
    /// A Python with `secretstorage` (and the `cryptography` it brings).
    let python: String
    let scratch: String
    let runs: Int
    /// The largest collection gnome-keyring is measured at: every store rewrites its whole file,
    /// so beyond some size one run takes hours. Larger sizes are ours alone.
    let peerLimit: Int

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

    /// The comparison on collections of each of `sizes` items, and the targets of issues 35 and
    /// 46 checked against it: at the smallest, every figure at least the peer's; at the largest
    /// the peer is run at, a store and a search at least 10 times the peer's rate; at the
    /// largest, a store, a search and the first answer after a start no slower than at the
    /// smallest by more than half.
    static func compare(python: String?, scratch: String, runs: Int, sizes: [Int], peerLimit: Int = 10_000, into report: inout Report) {
        if let reason = unavailableReason(python: python) {
            report.skipped["keychain serve against \(peer)"] = reason
            return
        }
        let bench = ServeBench(python: python!, scratch: scratch, runs: runs, peerLimit: peerLimit)
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
        for (_, call) in calls where call != firstAnswer { faster(small, call, times: 1) }
        // Against the peer at the largest size it was run at; against our own smallest at the largest.
        if let peerLarge = sizes.last(where: { $0 <= peerLimit }), peerLarge != small {
            for (_, call) in calls.prefix(2) { faster(peerLarge, call, times: 10) }
        }
        for (_, call) in calls.prefix(2) + calls.suffix(1) where large != small {
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
        let theirs = size <= peerLimit ? try gnomeKeyring(size: size, operations: operations, stores: stores) : nil
        let ours = try served(size: size, operations: operations, stores: stores)
        let group = "Secret Service providers, \(size.formatted())-item collection" + (theirs == nil ? " (\(Self.peer) not run above \(peerLimit.formatted()))" : "")
        var measurements: [Measurement] = []
        for (key, call) in Self.calls {
            guard let ourRates = ours[key] else { throw BenchError("no \(key) figures") }
            var measured = Measurement(name: "keychain serve: \(call)", group: group, rates: ourRates)
            guard let theirs else {
                measurements.append(measured)
                continue
            }
            guard let theirRates = theirs[key] else { throw BenchError("no \(key) figures of \(Self.peer)") }
            let peer = Measurement(name: "\(Self.peer): \(call)", group: group, rates: theirRates)
            measured.comparedWith = "times \(Self.peer)'s rate"
            measured.ratio = measured.median / peer.median
            measurements += [measured, peer]
        }
        return measurements
    }

    /// The figures' keys in the script's output, and what each times.
    static let calls = [
        ("store", "CreateItem (store, replace)"), ("search", "SearchItems (service, account)"), ("lookup", "secret-tool lookup (process/call)"),
        ("first", firstAnswer),
    ]
    static let firstAnswer = "start and unlock to the first SearchItems answer"

    /// The `SearchItems` call the first answer is timed by (one item found), as dbus-send makes it.
    static let searchArguments = [
        "--session", "--print-reply", "--reply-timeout=600000", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
        "org.freedesktop.Secret.Service.SearchItems", "dict:string:string:service,keychain-bench,account,user-1",
    ]

    /// The pid owning org.freedesktop.secrets on the bus of `environment`, if any.
    private static func owner(_ environment: [String: String]) -> pid_t? {
        let asked = try? Subprocess.run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"],
            environment: environment)
        guard asked?.status == 0, let word = asked?.output.split(separator: " ").last else { return nil }
        return pid_t(word.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Stops the provider owning the name and waits (a bounded while) until the name is free.
    private static func stopOwner(_ environment: [String: String]) {
        guard let pid = owner(environment) else { return }
        kill(pid, SIGTERM)
        for _ in 0..<600 where owner(environment) != nil { usleep(50_000) }
    }

    /// Rates (1 / seconds) of `runs` timings of `start` up to the first SearchItems answer that
    /// finds an item, the provider stopped after each.
    private func firstAnswers(_ environment: [String: String], start: () throws -> Void) throws -> [Double] {
        var rates: [Double] = []
        for _ in 0..<runs {
            Self.stopOwner(environment)
            let began = Clock.now()
            try start()
            var answered = false
            for _ in 0..<12_000 where !answered {
                let reply = try Subprocess.run("/usr/bin/dbus-send", Self.searchArguments, environment: environment)
                answered = reply.status == 0 && reply.output.contains("/org/freedesktop/secrets/collection/")
                if !answered { usleep(5_000) }
            }
            guard answered else { throw BenchError("no SearchItems answer within a minute of the start") }
            rates.append(1e9 / Double(Clock.now() - began))
        }
        Self.stopOwner(environment)
        return rates
    }

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
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": directory + "/home", "DBUS_SESSION_BUS_ADDRESS": bus, "XDG_RUNTIME_DIR": directory + "/run",
            "XDG_DATA_HOME": directory + "/data",
        ]
        var measured = try rates(environment, size: size, operations: operations, stores: stores)
        measured["first"] = try firstAnswers(environment) {
            // Before the name is taken, a call would start gnome-keyring's own activation file (locked).
            // As a fresh login finds it: no control socket of the daemon stopped before.
            try? FileManager.default.removeItem(atPath: directory + "/run/keyring")
            // Its output to /dev/null: the daemon it forks keeps what it was given open, and a
            // pipe would not end until it exits.
            let started = try Subprocess.run(
                "/bin/sh", ["-c", "exec \"$0\" --unlock --components=secrets --daemonize >/dev/null 2>&1", Peers.which(Self.peer) ?? "/usr/bin/gnome-keyring-daemon"],
                environment: environment, input: Data(password.utf8))
            guard started.status == 0 else { throw BenchError("\(Self.peer) --unlock failed: \(started.stderr)") }
            for _ in 0..<1_200 where Self.owner(environment) == nil { usleep(5_000) }
        }
        // scripts/secret-service.sh stop kills the pid it wrote: the last one started here is stopped already.
        return measured
    }

    /// The passphrase of the vaults `keychain serve` is measured over.
    static let passphrase = "keychain-bench"

    /// `keychain serve` (the command beside this benchmark) over a new vault, filled with the
    /// same items in one write (``ServedFill``).
    private func served(size: Int, operations: Int, stores: Int) throws -> [String: [Double]] {
        let served = try ServedVault(serving: false)
        // A passphrase, as gnome-keyring's login keyring has one: each start unlocks with it.
        let passphrase = served.directory.path + "/passphrase"
        _ = FileManager.default.createFile(atPath: passphrase, contents: Data(Self.passphrase.utf8), attributes: [.posixPermissions: 0o600])
        let set = try Subprocess.run(KeychainExecutable.path, ["passwd"], environment: served.environment.merging(["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]) { $1 })
        guard set.status == 0 else { throw BenchError("keychain passwd failed: \(set.stderr)") }
        try ServedFill.fill(vault: served.vaultPath, passphrase: Self.passphrase, items: size)
        try served.startServing(environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase])
        // Its first start lists every filled item's pairs before it takes the name: at 100,000
        // items, on a busy machine, longer than one wait's ten seconds.
        var up = false
        for _ in 0..<30 where !up { up = served.waitForProvider() }
        guard up else { throw BenchError("keychain serve did not take the name") }
        var measured = try rates(served.environment, size: size, operations: operations, stores: stores)
        served.stopServing()
        // From here on the bus starts it at the first call (D-Bus activation), with the passphrase.
        let services = served.directory.path + "/data/dbus-1/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        try "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/usr/bin/env KEYCHAIN_PASSPHRASE_FILE=\(passphrase) \(KeychainExecutable.path) serve\n"
            .write(toFile: services + "/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        _ = try Subprocess.run(
            "/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.ReloadConfig"], environment: served.environment)
        measured["first"] = try firstAnswers(served.environment) {}
        return measured
    }
}
