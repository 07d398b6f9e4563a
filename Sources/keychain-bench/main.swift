import Foundation
import KeychainCore
import KeychainTestSupport
import Valet

// keychain-bench: our vault against its floors and its peers, in one run.
// Usage: swift run -c release keychain-bench [--quick] [--runs N] [--out DIR] [--cli PATH] [--static-cli PATH] [--install-peers] [--sync-only] [--serve-only]
//   --static-cli: the command as installed, instead of building it (scripts/build-static.sh) into .build/bench-static
//   --install-peers: the Python peers (keyring, keyrings.alt, secretstorage) installed from PyPI
//   into a private virtual environment (.build/bench-peers, reused), and keyctl from Debian's
//   keyutils when run as root, so the peer table is whole.
//   --serve-only: only `keychain serve` against gnome-keyring-daemon (100 and 10,000 items; ours at 100,000 too).
//   --serve-sizes N,N,...: the collection sizes `keychain serve` is measured at (e.g. 100,10000,100000);
//   --serve-peer-max N: the largest of them gnome-keyring-daemon is measured at too (10,000 by default).
//   --serve-fill VAULT N: only fill a served vault with N items (see below), for profiling.

let arguments = CommandLine.arguments.dropFirst()
let quick = arguments.contains("--quick")
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), arguments.index(after: index) < arguments.endIndex else { return nil }
    return arguments[arguments.index(after: index)]
}
let runs = option("--runs").flatMap(Int.init) ?? (quick ? 3 : 5)
let outputDirectory = option("--out") ?? "bench-results"
let sizes = quick ? [100, 1_000] : [100, 10_000, 100_000]
let reads = quick ? 2_000 : 20_000
let writes = quick ? 50 : 200
let pairs = quick ? 20 : 100

func log(_ message: String) { FileHandle.standardError.write(Data((message + "\n").utf8)) }

let scratch = NSTemporaryDirectory() + "keychain-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: scratch) }
/// Ends the run early (a profile or the sync figures only), without the temporary vaults: `exit` runs no `defer`.
func finish() -> Never {
    try? FileManager.default.removeItem(atPath: scratch)
    exit(0)
}

// `--profile get|allKeys|set [--items N]`: only that loop over N items (1,000 by default), for
// valgrind --tool=callgrind (instruction counts are repeatable on these noisy machines, unlike
// wall-clock time) or strace -c (system calls).
if let target = option("--profile") {
    let bench = try VaultBench(directory: scratch, items: option("--items").flatMap(Int.init) ?? 1_000, runs: 1)
    switch target {
    case "get": for key in bench.randomKeys(5_000, seed: 1) { _ = try bench.valet.string(forKey: key) }
    case "set": try bench.durableSets(bench.randomKeys(200, seed: 2), round: 0)
    default:
        for _ in 0..<20 {
            var before = rusage(), after = rusage()
            getrusage(RUSAGE_SELF.rawValue, &before)
            let start = Clock.now()
            _ = try bench.valet.allKeys()
            let seconds = Double(Clock.now() - start) / 1e9
            getrusage(RUSAGE_SELF.rawValue, &after)
            let system = Double(after.ru_stime.tv_sec - before.ru_stime.tv_sec) + Double(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6
            log(String(format: "allKeys: %.4f s (system %.4f s, %d page faults)", seconds, system, after.ru_minflt - before.ru_minflt))
        }
    }
    finish()
}

// `--serve-fill VAULT N`: fills `keychain serve`'s collection in VAULT (passphrase "keychain-bench",
// set before with `keychain passwd`) with the benchmark's N items, for profiling a served vault
// of that size by hand.
if let path = option("--serve-fill") {
    guard let fillIndex = arguments.firstIndex(of: "--serve-fill"), arguments.count > arguments.distance(from: arguments.startIndex, to: fillIndex) + 2,
        let items = Int(arguments[arguments.index(fillIndex, offsetBy: 2)])
    else {
        log("usage: keychain-bench --serve-fill VAULT N")
        exit(2)
    }
    try ServedFill.fill(vault: path, passphrase: ServeBench.passphrase, items: items)
    finish()
}

// `--sync-only`: just the sync figures (propagation and a first sync), for work on the engine.
if arguments.contains("--sync-only") {
    var syncReport = Report(machine: [:])
    syncReport.measurements = try SyncBench.measure(scratch: scratch, writes: quick ? 100 : 300, items: quick ? 2_000 : 10_000)
    print(syncReport.table())
    finish()
}

/// The Python that runs the peers: the private environment of `--install-peers`, else python3.
func peersPython() -> (interpreter: String?, skipped: String?) {
    guard arguments.contains("--install-peers") else { return (Peers.which("python3"), nil) }
    log("· installing the Python peers into .build/bench-peers (pip, from PyPI)")
    do {
        return (try Peers.installPythonPeers(into: FileManager.default.currentDirectoryPath + "/.build/bench-peers"), nil)
    } catch {
        return (nil, "--install-peers failed: \(error)")
    }
}

let serveSizes = option("--serve-sizes").map { $0.split(separator: ",").compactMap { Int($0) } } ?? (quick ? [100, 1_000] : [100, 10_000, 100_000])
let servePeerLimit = option("--serve-peer-max").flatMap(Int.init) ?? 10_000

if arguments.contains("--serve-only") {
    var serveReport = Report(machine: [:])
    ServeBench.compare(python: peersPython().interpreter, scratch: scratch, runs: runs, sizes: serveSizes, peerLimit: servePeerLimit, into: &serveReport)
    print(serveReport.table())
    finish()
}

func machine() -> [String: String] {
    let cpu =
        (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown"
    var name = utsname()
    uname(&name)
    let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return [
        "cpu": cpu, "cores": String(ProcessInfo.processInfo.activeProcessorCount),
        "memory": "\(ProcessInfo.processInfo.physicalMemory >> 30) GiB", "kernel": release,
        "date": ISO8601DateFormatter().string(from: Date()), "mode": quick ? "quick" : "full", "runs": String(runs),
    ]
}

var report = Report(machine: machine())
var getRates: [Int: Double] = [:]
var allKeysSeconds: [Int: Double] = [:]

for size in sizes {
    log("· \(size) items: floors")
    let floor = try SQLiteFloor(path: "\(scratch)/floor-\(size).sqlite", items: size)
    let selectFloor = Measurement(
        name: "raw SQLite point select", group: "floors, \(size.formatted()) rows",
        rates: try Clock.rates(runs: runs, operations: reads) { run in try floor.pointSelects(reads, seed: UInt64(run + 7)) })
    let upsertFloor = Measurement(
        name: "raw SQLite durable upsert", group: "floors, \(size.formatted()) rows",
        rates: try Clock.rates(runs: runs, operations: writes) { run in try floor.durableUpserts(writes, seed: UInt64(run + 9)) })
    report.measurements += [selectFloor, upsertFloor]
    log("· \(size) items: vault")
    let bench = try VaultBench(directory: scratch, items: size, runs: runs)
    // A durable write is an fsync, whose cost drifts from one second to the next on a shared
    // machine: the set's ratio comes from rounds that time the floor and the vault back to back.
    let pairedKeys = bench.randomKeys(writes, seed: 2)
    let paired = try Clock.pairedRatio(
        rounds: max(runs, 5), floor: { round in try floor.durableUpserts(writes, seed: UInt64(round + 11)) },
        measured: { round in try bench.durableSets(pairedKeys, round: round) })
    floor.close()
    for var measurement in try bench.measureAll(reads: reads, writes: writes) {
        switch measurement.name {
        case "string(forKey:)", "containsObject(forKey:)":
            measurement.comparedWith = "raw point select"
            measurement.ratio = selectFloor.median / measurement.median
        case "setString (durable, each committed)":
            measurement.comparedWith = "raw durable upsert, median of \(paired.rounds) back-to-back rounds"
            measurement.ratio = paired.median
        case "removeObject (durable)":
            measurement.comparedWith = "raw durable upsert"
            measurement.ratio = upsertFloor.median / measurement.median
        default: break
        }
        if measurement.name == "string(forKey:)" { getRates[size] = measurement.median }
        if measurement.name == "allKeys()" { allKeysSeconds[size] = 1 / measurement.median }
        report.measurements.append(measurement)
    }
    if size == sizes.last {
        log("· batch write")
        report.measurements.append(try bench.batchWrite(count: 10_000))
    }
}

report.measurements.append(
    Measurement(
        name: "AES-256-GCM seal+open, 32-byte value", group: "floors, crypto",
        rates: Clock.rates(runs: runs, operations: reads) { _ in aesGCMRoundTrips(reads, valueSize: 32) }))
let openFloor = Measurement(
    name: "AES-256-GCM open, 32-byte value", group: "floors, crypto",
    rates: Clock.rates(runs: runs, operations: reads) { _ in aesGCMOpens(reads, valueSize: 32) })
report.measurements.append(openFloor)

log("· open + unlock (scrypt N=2^17, r=8, p=1)")
do {
    let configuration = VaultConfiguration(location: VaultLocation(path: "\(scratch)/unlock.keychain"), usesKernelKeyring: false)
    try Vault(configuration).changePassphrase(from: nil, to: SecretBytes(utf8: "benchmark passphrase"))
    report.measurements.append(
        Measurement(
            name: "open + unlock", group: "vault: key derivation",
            rates: try Clock.rates(runs: 3, operations: 1) { _ in
                try Vault(configuration).unlock(passphrase: SecretBytes(utf8: "benchmark passphrase"))
            }, note: "scrypt default parameters; paid once per process"))
}

// Whole processes: our command, and the peers that are commands.
// `--cli PATH` measures another build of the command (e.g. one linked with --static-swift-stdlib).
let keychainBinary =
    option("--cli")
    ?? ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    .replacingOccurrences(of: "/keychain-bench", with: "/keychain")
let cliVault = "\(scratch)/cli.keychain"
if option("--cli") == nil, !FileManager.default.isExecutableFile(atPath: keychainBinary) {
    log("· building the keychain command beside the benchmark")
    if case .failure(let reason) = InstalledCommand.buildBeside(keychainBinary) { log("  \(reason)") }
}
var cliGet: Measurement?
var installedGet: Measurement?
var processFloors: [String: Measurement] = [:]
var secretToolGet: Measurement?
var installedBinary: String?
/// How many times longer `secret-tool lookup` takes than the installed `keychain get`, timed back to back.
var secretToolRatio: (median: Double, rounds: Int)?
if FileManager.default.isExecutableFile(atPath: keychainBinary) {
    log("· keychain get as a fresh process")
    try Peers.spawn(keychainBinary, ["set", "--vault", cliVault, "--identifier", "Bench", "token"], input: Data("s3cret".utf8))
    let measurement = Measurement(
        name: "keychain get (fresh process)", group: "ours: whole processes",
        rates: try Clock.rates(runs: runs, operations: 20) { _ in
            for _ in 0..<20 { try Peers.spawn(keychainBinary, ["get", "--vault", cliVault, "--identifier", "Bench", "token"]) }
        })
    cliGet = measurement
    report.measurements.append(measurement)

    log("· the process floor (C) and the command as installed (static)")
    let floorBuild = ProcessFloor.build(into: scratch)
    switch floorBuild {
    case .success(let floorBinary):
        for (label, extra) in [("OpenSSL as set up by default", [String]()), ("OpenSSL set up as keychain sets it up", ["--as-keychain"])] {
            let floor = Measurement(
                name: "process floor: open, select, AES-GCM open (C, \(label))", group: "floors, whole processes",
                rates: try Clock.rates(runs: runs, operations: 20) { _ in
                    for _ in 0..<20 { try Peers.spawn(floorBinary, [cliVault] + extra) }
                }, note: "Benchmarks/process_floor.c, built by this run")
            processFloors[label] = floor
            report.measurements.append(floor)
        }
    case .failure(let reason):
        report.skipped["process floor"] = reason.description
    }
    let installed = (option("--static-cli").map { Result<String, BenchError>.success($0) } ?? InstalledCommand.build()).flatMap {
        InstalledCommand.freshCopy(of: $0, into: scratch)
    }
    switch installed {
    case .success(let binary):
        var measurement = Measurement(
            name: "keychain get (fresh process, static as installed)", group: "ours: whole processes",
            rates: try Clock.rates(runs: runs, operations: 20) { _ in
                for _ in 0..<20 { try Peers.spawn(binary, ["get", "--vault", cliVault, "--identifier", "Bench", "token"]) }
            }, note: "scripts/build-static.sh, as scripts/install.sh builds it")
        if case .success(let floorBinary) = floorBuild {
            // Whole processes drift with the machine's load as fsyncs do: timed back to back.
            let paired = try Clock.pairedRatio(
                rounds: max(runs, 9), floor: { _ in for _ in 0..<20 { try Peers.spawn(floorBinary, [cliVault, "--as-keychain"]) } },
                measured: { _ in for _ in 0..<20 { try Peers.spawn(binary, ["get", "--vault", cliVault, "--identifier", "Bench", "token"]) } })
            measurement.comparedWith = "the process floor (OpenSSL set up as keychain sets it up), median of \(paired.rounds) back-to-back rounds"
            measurement.ratio = paired.median
        }
        installedBinary = binary
        installedGet = measurement
        report.measurements.append(measurement)
    case .failure(let reason):
        report.skipped["keychain get (static)"] = reason.description
    }

    // A fresh process reading or writing one item of the largest vault checks the ledger shard
    // that item falls in, not every row (a 100,000-item vault took ten times the 1-item one's
    // time to read when it did, and a write took 0.09 s): timed back to back with the same
    // command on the 1-item vault.
    if let large = sizes.last {
        let binary = installedBinary ?? keychainBinary
        let largeVault = "\(scratch)/bench-\(large).keychain"
        // As a Valet names its items (`--identifier`), and as a script names one of its own
        // (`--service S ACCOUNT`, kept at the default access group).
        for vault in [largeVault, cliVault] {
            try Peers.spawn(binary, ["set", "--vault", vault, "--service", "bench-raw", "deploy"], input: Data("raw-secret".utf8))
        }
        // A set writes the value each vault already holds, so that later reads find what they expect.
        typealias Invocation = (arguments: [String], input: String)
        let commands: [(name: String, large: Invocation, small: Invocation)] = [
            ("get", (["get", "--identifier", "Bench", "key-1"], ""), (["get", "--identifier", "Bench", "token"], "")),
            ("set", (["set", "--identifier", "Bench", "key-1"], "value-of-key-1-0123456789abcdef"), (["set", "--identifier", "Bench", "token"], "s3cret")),
            ("get --service", (["get", "--service", "bench-raw", "deploy"], ""), (["get", "--service", "bench-raw", "deploy"], "")),
        ]
        for command in commands {
            log("· keychain \(command.name) of one item of a \(large.formatted())-item vault (fresh process)")
            let onLarge = { () throws in try Peers.spawn(binary, command.large.arguments + ["--vault", largeVault], input: Data(command.large.input.utf8)) }
            let onSmall = { () throws in try Peers.spawn(binary, command.small.arguments + ["--vault", cliVault], input: Data(command.small.input.utf8)) }
            var measurement = Measurement(
                name: "keychain \(command.name) (fresh process), \(large.formatted())-item vault", group: "ours: whole processes",
                rates: try Clock.rates(runs: runs, operations: 20) { _ in for _ in 0..<20 { try onLarge() } },
                note: installedBinary == nil ? "the command as built" : "static, as installed")
            let paired = try Clock.pairedRatio(
                rounds: max(runs, 9), floor: { _ in for _ in 0..<20 { try onSmall() } }, measured: { _ in for _ in 0..<20 { try onLarge() } })
            measurement.comparedWith = "keychain \(command.name) of a 1-item vault, median of \(paired.rounds) back-to-back rounds"
            measurement.ratio = paired.median
            report.measurements.append(measurement)
            report.targets.append(
                .init(
                    goal: "keychain \(command.name) of one item of a \(large.formatted())-item vault within 1.3x of a 1-item vault's",
                    measured: String(format: "%.2fx in back-to-back rounds (%.1f ms)", paired.median, 1000 / measurement.median), met: paired.median <= 1.3))
        }
    }

    // The common scripting case: `keychain unlock` once, then fresh processes read whenUnlocked
    // items through the user's unlocked state, against paying scrypt in each process.
    log("· keychain get of a whenUnlocked item in a passphrase vault: after unlock, and with the passphrase each time")
    let unlockedVault = "\(scratch)/cli-unlocked.keychain", passphraseFile = "\(scratch)/cli-passphrase"
    _ = FileManager.default.createFile(atPath: passphraseFile, contents: Data("bench passphrase".utf8), attributes: [.posixPermissions: 0o600])
    try Peers.spawn(keychainBinary, ["set", "--vault", unlockedVault, "--identifier", "Bench", "token"], input: Data("s3cret".utf8))
    setenv("KEYCHAIN_NEW_PASSPHRASE_FILE", passphraseFile, 1)
    try Peers.spawn(keychainBinary, ["passwd", "--vault", unlockedVault])
    unsetenv("KEYCHAIN_NEW_PASSPHRASE_FILE")
    setenv("KEYCHAIN_PASSPHRASE_FILE", passphraseFile, 1)
    try Peers.spawn(keychainBinary, ["lock", "--vault", unlockedVault])
    report.measurements.append(
        Measurement(
            name: "keychain get, locked, passphrase in each process", group: "ours: whole processes",
            rates: try Clock.rates(runs: 3, operations: 1) { _ in
                // Locked first: the get's own unlock would otherwise open the vault for the next one.
                try Peers.spawn(keychainBinary, ["lock", "--vault", unlockedVault])
                try Peers.spawn(keychainBinary, ["get", "--vault", unlockedVault, "--identifier", "Bench", "token"])
            }, note: "a lock then a get that pays scrypt N=2^17: each process on its own, as before the user's unlocked state"))
    try Peers.spawn(keychainBinary, ["unlock", "--vault", unlockedVault])
    unsetenv("KEYCHAIN_PASSPHRASE_FILE")
    report.measurements.append(
        Measurement(
            name: "keychain get after keychain unlock (fresh process)", group: "ours: whole processes",
            rates: try Clock.rates(runs: runs, operations: 20) { _ in
                for _ in 0..<20 { try Peers.spawn(keychainBinary, ["get", "--vault", unlockedVault, "--identifier", "Bench", "token"]) }
            }, note: "whenUnlocked keys from the user's unlocked state in the kernel keyring: no passphrase, no scrypt"))
    try Peers.spawn(keychainBinary, ["lock", "--vault", unlockedVault])
} else {
    report.skipped["keychain get (process)"] = "the keychain executable is not built beside keychain-bench (\(keychainBinary))"
}

if let reason = EtcdCluster.unavailableReason {
    report.skipped["sync"] = reason
} else {
    log("· sync: propagation through a 3-member etcd cluster, and a first sync")
    do {
        let measured = try SyncBench.measure(scratch: scratch, writes: quick ? 100 : 300, items: quick ? 2_000 : 10_000)
        report.measurements += measured
        if let ours = measured.first(where: { $0.comparedWith != nil }), let ratio = ours.ratio {
            report.targets.append(
                .init(goal: "sync propagation within 2x of etcd's own put-to-watch", measured: String(format: "%.2fx (%@)", ratio, ours.note ?? ""), met: ratio <= 2))
        }
    } catch {
        report.skipped["sync"] = "the sync benchmark failed: \(error)"
    }
}

log("· set+get pairs: ours and the peers")
let pairBench = try VaultBench(directory: scratch, items: 100, runs: runs)
let ourPairs = Measurement(
    name: "this vault via Valet (in-process)", group: "ours: set+get pairs",
    rates: try Clock.rates(runs: runs, operations: pairs) { run in
        for index in 0..<pairs {
            try pairBench.valet.setString("pair-\(run)-\(index)", forKey: "pair\(index)")
            _ = try pairBench.valet.string(forKey: "pair\(index)")
        }
    })
report.measurements.append(ourPairs)
if FileManager.default.isExecutableFile(atPath: keychainBinary) {
    report.measurements.append(
        try Peers.processPairs(
            name: "keychain command (process/op)", runs: runs, pairs: min(pairs, 30),
            set: { run, index in
                try Peers.spawn(keychainBinary, ["set", "--vault", cliVault, "--service", "bench", "a\(index)"], input: Data("v\(run)".utf8))
            },
            get: { index in
                try Peers.spawn(keychainBinary, ["get", "--vault", cliVault, "--service", "bench", "a\(index)"])
            }
        ).relabelled(group: "ours: set+get pairs"))
}
if arguments.contains("--install-peers"), Peers.which("keyctl") == nil {
    log("· installing keyctl (apt-get install keyutils)")
    if let reason = Peers.installKeyctl() { report.skipped["keyctl"] = reason }
}
if let keyctl = Peers.which("keyctl") {
    report.measurements.append(
        try Peers.processPairs(
            name: "keyctl (process/op)", runs: runs, pairs: min(pairs, 30),
            set: { run, index in
                try Peers.spawn(keyctl, ["padd", "user", "keychain-bench:\(getpid()):\(index)", "@u"], input: Data("v\(run)".utf8))
            },
            get: { index in
                try Peers.spawn(keyctl, ["pipe", "%user:keychain-bench:\(getpid()):\(index)"])
            }))
    for index in 0..<min(pairs, 30) { _ = try? Peers.run(keyctl, ["purge", "user", "keychain-bench:\(getpid()):\(index)"]) }
} else if report.skipped["keyctl"] == nil {
    report.skipped["keyctl"] = "keyctl is not installed (apt-get install keyutils, or --install-peers as root)"
}
if let reason = Peers.secretService() {
    report.skipped["secret-tool"] = reason
} else if let secretTool = Peers.which("secret-tool") {
    let service = "keychain-bench-\(getpid())"
    report.measurements.append(
        try Peers.processPairs(
            name: "secret-tool (process/op)", runs: runs, pairs: min(pairs, 30),
            set: { run, index in
                try Peers.spawn(secretTool, ["store", "--label=keychain-bench", "service", service, "account", "a\(index)"], input: Data("v\(run)".utf8))
            },
            get: { index in
                try Peers.spawn(secretTool, ["lookup", "service", service, "account", "a\(index)"])
            }))
    secretToolGet = Measurement(
        name: "secret-tool lookup (process)", group: "peers: whole processes",
        rates: try Clock.rates(runs: runs, operations: 20) { _ in
            for _ in 0..<20 { try Peers.spawn(secretTool, ["lookup", "service", service, "account", "a0"]) }
        })
    report.measurements.append(secretToolGet!)
    if let installedBinary {
        secretToolRatio = try Clock.pairedRatio(
            rounds: max(runs, 9),
            floor: { _ in for _ in 0..<10 { try Peers.spawn(installedBinary, ["get", "--vault", cliVault, "--identifier", "Bench", "token"]) } },
            measured: { _ in for _ in 0..<10 { try Peers.spawn(secretTool, ["lookup", "service", service, "account", "a0"]) } })
    }
    for index in 0..<min(pairs, 30) { _ = try? Peers.run(secretTool, ["clear", "service", service, "account", "a\(index)"]) }
}
let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Benchmarks/python_peers.py").standardized.path
let (interpreter, installFailure) = peersPython()
if let installFailure { report.skipped["python peers"] = installFailure }
let python = Peers.python(script: script, pairs: min(pairs, 50), runs: runs, interpreter: interpreter)
report.measurements += python.measurements
report.skipped.merge(python.skipped) { $1 }

ServeBench.compare(python: interpreter, scratch: scratch, runs: runs, sizes: serveSizes, peerLimit: servePeerLimit, into: &report)

for index in report.measurements.indices where report.measurements[index].group.hasPrefix("peers: set+get") {
    report.measurements[index].comparedWith = "slower than this vault"
    report.measurements[index].ratio = ourPairs.median / report.measurements[index].median
}

// Targets from the performance issue, checked against today's figures.
func fmt(_ value: Double) -> String { Report.format(value) }
func seconds(_ rate: Double) -> Double { 1 / rate }
if let small = sizes.first, let large = sizes.last, let getSmall = getRates[small], let getLarge = getRates[large] {
    let selectRate = { (rows: Int) in report.measurements.first { $0.group == "floors, \(rows.formatted()) rows" && $0.name == "raw SQLite point select" }?.median }
    if let select = selectRate(small) {
        // A read's floor: the select that finds the row plus the open of its value.
        let floor = seconds(select) + seconds(openFloor.median)
        let ratio = seconds(getSmall) / floor
        report.targets.append(
            .init(
                goal: "get within 2x of a raw SQLite point select plus one AES-GCM open",
                measured: String(format: "%.2fx (%.1f µs against %.1f µs)", ratio, seconds(getSmall) * 1e6, floor * 1e6), met: ratio <= 2))
    }
    // The issue's bound is 1.3x "(the raw select itself slows 1.27x; do not lose more than
    // SQLite does)": on a loaded machine the select slows far more, so both are shown.
    let slowdown = getSmall / getLarge
    if let selectSmall = selectRate(small), let selectLarge = selectRate(large) {
        let selectSlowdown = selectSmall / selectLarge
        report.targets.append(
            .init(
                goal: "get at \(large.formatted()) items within 1.3x of get at \(small) items",
                measured: String(format: "%.2fx (the raw select in the same run: %.2fx)", slowdown, selectSlowdown), met: slowdown <= 1.3))
        report.targets.append(
            .init(
                goal: "get at \(large.formatted()) items slows no more than the raw select does",
                measured: String(format: "%.2fx against %.2fx", slowdown, selectSlowdown), met: slowdown <= selectSlowdown))
    }
    if let set = report.measurements.first(where: { $0.group == "vault via Valet, \(small.formatted()) items" && $0.name.hasPrefix("setString") }), let ratio = set.ratio {
        report.targets.append(
            .init(
                goal: "durable set within 1.5x of a raw SQLite durable upsert", measured: String(format: "%.2fx (%@ µs/op)", ratio, String(format: "%.0f", set.microseconds)),
                met: ratio <= 1.5))
    }
    if let seconds = allKeysSeconds[large] {
        report.targets.append(.init(goal: "allKeys of \(large.formatted()) items under 0.2 s", measured: String(format: "%.3f s", seconds), met: seconds < 0.2))
    }
}
if let batch = report.measurements.first(where: { $0.name.contains("batch write") }) {
    report.targets.append(
        .init(goal: "a 10,000-item migration in one transaction under 1 s", measured: String(format: "%.3f s (batch write)", 1 / batch.median), met: 1 / batch.median < 1))
}
if let installedGet {
    let ms = 1000 / installedGet.median
    if let ratio = installedGet.ratio, let floor = processFloors["OpenSSL set up as keychain sets it up"] {
        report.targets.append(
            .init(
                goal: "keychain get as installed within 1.5x of the process floor (OpenSSL set up as keychain sets it up)",
                measured: String(format: "%.2fx in back-to-back rounds (medians apart: %.1f ms against %.1f ms)", ratio, ms, 1000 / floor.median),
                met: ratio <= 1.5))
    }
    if let secretToolGet, let secretToolRatio {
        report.targets.append(
            .init(
                goal: "keychain get as installed at least 3x faster than secret-tool lookup",
                measured: String(format: "%.1fx in back-to-back rounds (medians apart: %.1f ms against %.1f ms)", secretToolRatio.median, ms, 1000 / secretToolGet.median),
                met: secretToolRatio.median >= 3))
    }
}

try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
try encoder.encode(report).write(to: URL(fileURLWithPath: "\(outputDirectory)/keychain-bench.json"))
try report.chart().write(toFile: "\(outputDirectory)/keychain-bench.svg", atomically: true, encoding: .utf8)
print("machine: \(report.machine.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))")
print(report.table())
print("\nwrote \(outputDirectory)/keychain-bench.json and \(outputDirectory)/keychain-bench.svg")

extension Measurement {
    func relabelled(group: String) -> Measurement {
        Measurement(name: name, group: group, rates: rates, note: note, comparedWith: comparedWith, ratio: ratio)
    }
}
