import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Power loss: each operation of the `keychain` command is traced once (strace), and every
/// state a power cut during it could leave on disk, under each ``PersistenceModel``, is written
/// out and checked as the next process after the reboot finds it: every watched vault is as
/// before the operation or as after it, whole (nothing half-applied, no item of another scope,
/// `verify` sound, opened by a passphrase the user was told), never a key file without its
/// vault that the next write cannot finish, and once the command has exited, as after it.
enum PowerLossCheck {
    /// A deliberately wrong order put into the recorded trace, to prove the explorer catches it.
    enum Fault: String, CaseIterable {
        /// The new vault is linked into place before its key file.
        case vaultBeforeKey = "vault-before-key"
        /// Every fsync of a directory is left out.
        case noDirectorySync = "no-directory-sync"
    }

    struct Options {
        var quick = true
        /// Check every distinct state, also in quick mode (whose choices per point stay few).
        var everyState = false
        var fault: Fault?
        var operations: Set<String>?
        var models = PersistenceModel.allCases
    }

    static func run(_ env: CheckEnvironment, _ options: Options) -> CheckResult {
        var result = CheckResult("power loss (crash states of each operation)")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else {
            result.skip("strace is not installed (apt-get install strace)")
            return result
        }
        let keychain = (env.program as NSString).deletingLastPathComponent + "/keychain"
        guard FileManager.default.isExecutableFile(atPath: keychain) else {
            result.fail("the keychain command is not built beside this program (\(keychain)): swift build --product keychain")
            return result
        }
        let fixtures = findFixtures(from: env.program)
        if fixtures == nil { result.figure("format-2 upgrade", "skipped: Tests/KeychainCoreTests/Fixtures/format2 not found above \(env.program)") }
        var random = SeededRandom(seed: env.seed)
        for operation in PowerLossOperation.all(fixtures: fixtures) where options.operations?.contains(where: { operation.name.hasPrefix($0) }) ?? true {
            explore(operation, env: env, keychain: keychain, options: options, random: &random, &result)
        }
        for operation in PowerLossOperation.secretService where options.operations?.contains(where: { operation.name.hasPrefix($0) }) ?? true {
            if let reason = ServedVault.unavailableReason {
                result.figure(operation.name, "skipped: \(reason)")
                continue
            }
            do {
                let bus = try ServedVault(serving: operation.bus == .provider)
                explore(operation, env: env, keychain: keychain, bus: bus, options: options, random: &random, &result)
            } catch {
                result.fail("\(operation.name): no private session bus\(operation.bus == .provider ? " with keychain serve on it" : ""): \(error)")
            }
        }
        if options.operations?.contains(where: { PowerLossOperation.syncRound.name.hasPrefix($0) }) ?? true {
            if let reason = EtcdCluster.unavailableReason {
                result.figure(PowerLossOperation.syncRound.name, "skipped: \(reason)")
            } else {
                SyncCheck.onCluster(&result) { _, cluster, result in
                    explore(PowerLossOperation.syncRound, env: env, keychain: keychain, cluster: cluster, options: options, random: &random, &result)
                }
            }
        }
        let arrival = PowerLossOperation.servedArrival
        if options.operations?.contains(where: { arrival.name.hasPrefix($0) }) ?? true {
            if let reason = EtcdCluster.unavailableReason ?? ServedVault.unavailableReason {
                result.figure(arrival.name, "skipped: \(reason)")
            } else {
                SyncCheck.onCluster(&result) { _, cluster, result in
                    explore(arrival, env: env, keychain: keychain, cluster: cluster, bus: try ServedVault(serving: false), options: options, random: &random, &result)
                }
            }
        }
        return result
    }

    private static func explore(
        _ operation: PowerLossOperation, env: CheckEnvironment, keychain: String, cluster: SyncCluster? = nil, bus: ServedVault? = nil,
        options: Options,
        random: inout SeededRandom,
        _ result: inout CheckResult
    ) {
        let started = ContinuousClock.now
        let base = env.directory("power-loss")
        let place = PowerLossPlace(root: base + "/tree", secrets: base + "/secrets", keychain: keychain, cluster: cluster, bus: bus)
        mkdir(place.root, 0o700)
        mkdir(place.secrets, 0o700)
        defer { try? FileManager.default.removeItem(atPath: base) }
        var trace: FileTrace
        do {
            try operation.prepare(place)
            let recorded = try FileTrace.record(
                program: keychain, operation.arguments(place), environment: place.environment.merging(operation.environment(place)) { $1 },
                input: Array(operation.input.utf8), root: place.root, scratch: base,
                ready: {
                    guard bus?.waitForProvider() ?? true else { throw FileTrace.Failure(description: "keychain serve never took org.freedesktop.secrets") }
                },
                client: operation.client.map { client in { try client(place) } })
            // A daemon ends by the SIGTERM that stops it (its default action).
            guard recorded.status == (operation.client == nil ? 0 : SIGTERM) else {
                result.fail("\(operation.name): the command failed (status \(recorded.status)): \(recorded.stderr)")
                return
            }
            trace = recorded.trace
            if let fault = options.fault { trace.operations = inject(fault, into: trace.operations) }
        } catch {
            result.fail("\(operation.name): \(error)")
            return
        }
        let machine = operation.machineIdentityFile.map { MachineIdentity(paths: [$0(place)]) } ?? MachineIdentity()
        var stateNumber = 0
        let read: (CrashState, Bool) -> [VaultReading]? = { state, finishing in
            stateNumber += 1
            let directory = base + "/state-\(stateNumber)"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            do { try CrashStateFiles(trace, state).write(to: directory) } catch { return nil }
            let archives = operation.archives.map { VaultReading.readArchive(directory + "/" + $0, passphrase: PowerLossOperation.archivePassphrase) }
            return operation.watched.map { watched in
                let path = directory + "/" + watched
                var reading = VaultReading.read(path, passphrases: operation.passphrases, machine: machine, withKeys: operation.changesKeys)
                if finishing, reading == .absent, FileManager.default.fileExists(atPath: path + ".key") {
                    reading = finishInterruptedCreation(path)
                }
                if finishing, case .unreadable(let why) = reading {
                    reading = .unreadable(why + " (" + VaultReading.recovery(path, passphrases: operation.passphrases, machine: machine) + ")")
                }
                return reading
            } + archives
        }
        let end = trace.operations.count
        let acknowledged = min(trace.acknowledgedAt ?? end, end)
        let files = operation.watched + operation.archives
        guard let before = read(CrashState(point: 0, persisted: []), false),
            let after = read(CrashState(point: end, persisted: [Bool](repeating: true, count: end)), false)
        else {
            result.fail("\(operation.name): cannot write the states before and after")
            return
        }
        for (index, reading) in (before + after).enumerated() {
            if case .unreadable(let why) = reading {
                result.fail(
                    "\(operation.name): \(files[index % files.count]) does not read \(index < before.count ? "before" : "after") the operation: \(why)")
                return
            }
        }
        guard before != after else {
            result.fail("\(operation.name): the command changed nothing the check reads (\(after.map(\.description).joined(separator: "; ")))")
            return
        }
        var acceptable = zip(before, after).map { [$0, $1] }
        // What a daemon commits on its own at start, before any client asks, is a whole state too.
        if let readyAt = trace.readyAt, let ready = read(CrashState(point: readyAt, persisted: [Bool](repeating: true, count: readyAt)), false) {
            for (index, reading) in ready.enumerated() where reading != before[index] {
                if case .unreadable(let why) = reading {
                    result.fail("\(operation.name): \(files[index]) does not read once the daemon was ready: \(why)")
                    return
                }
                acceptable[index].append(reading)
            }
        }
        for (index, watched) in files.enumerated() { acceptable[index] += operation.intermediates[watched] ?? [] }
        if operation.upgrades {
            for (index, reading) in before.enumerated() {
                if case .vault(_, let passphrase, let items, let keys) = reading {
                    acceptable[index].append(.vault(format: VaultReading.currentFormat, passphrase: passphrase, items: items, keys: keys))
                }
            }
        }
        let check: (CrashState, Bool) -> String? = { state, final in
            guard let readings = read(state, true) else { return "the state could not be written out" }
            for (index, reading) in readings.enumerated() {
                let name = files[index]
                if final && reading != after[index] { return "\(name) is \(reading) once the command had succeeded, not \(after[index])" }
                if !acceptable[index].contains(reading) {
                    return "\(name) is \(reading), neither as before (\(before[index])) nor as after (\(after[index]))"
                }
            }
            // A second name of a file no process ever removes (a key file's, an archive's).
            let stray = final ? CrashStateFiles(trace, state).names.keys.filter { $0.contains(".new-") }.sorted() : []
            if !stray.isEmpty { return "\(stray.joined(separator: ", ")) is left under a temporary name once the command had succeeded" }
            return nil
        }
        var figures: [String] = []
        for model in options.models {
            // Every choice of what was not synced, up to the limit at one point of the trace.
            var space = CrashStateSpace(trace: trace, model: model, limit: options.quick ? 16 : operation.longLimit)
            // Distinct states (the same files reached by different choices are checked once),
            // with how many choices reach each.
            var distinct: [(state: CrashState, final: Bool, count: Int)] = []
            var index: [[UInt8]: Int] = [:]
            var explored = 0
            space.forEach(random: &random) { state in
                explored += 1
                let final = state.point >= acknowledged
                let key = CrashStateFiles(trace, state).digest + [final ? 1 : 0]
                if let known = index[key] {
                    distinct[known].count += 1
                } else {
                    index[key] = distinct.count
                    distinct.append((state, final, 1))
                }
            }
            var chosen = Array(distinct.indices)
            if let budget = options.quick && !options.everyState ? operation.quickBudget : nil, chosen.count > budget {
                // Quick mode: the states after the command ended, and a seeded sample of the others.
                let finals = chosen.filter { distinct[$0].final }
                var others = chosen.filter { !distinct[$0].final }
                others.shuffle(using: &random)
                chosen = finals + others.prefix(max(0, budget - finals.count))
            }
            var failed = 0
            var checked = 0
            for choice in chosen {
                let (state, final, count) = distinct[choice]
                checked += count
                guard let problem = check(state, final) else { continue }
                failed += count
                result.fail("\(operation.name), \(model) model, cut after call \(state.point) of \(end) (\(describe(trace, state))): \(problem)")
            }
            let sampled = space.sampledPoints > 0 ? ", \(space.sampledPoints) points sampled" : ""
            let checkedText = chosen.count < distinct.count ? ", \(chosen.count) checked (\(checked) states)" : ""
            figures.append("\(model.rawValue) \(explored) states (\(distinct.count) distinct\(sampled)\(checkedText)), \(failed) failed")
        }
        let reply = trace.acknowledgedAt.map { " (ready after call \(trace.readyAt ?? 0), the client's reply after call \($0))" } ?? ""
        result.figure(operation.name, "\(end) calls traced\(reply); " + figures.joined(separator: "; ") + String(format: " (%.1f s)", started.secondsSince))
    }

    /// What the next write does to a key file left without its vault: finish the creation from
    /// the vault left under its temporary name. Read again after it; a clear refusal is a failure.
    private static func finishInterruptedCreation(_ path: String) -> VaultReading {
        do {
            let vault = try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false, syncsInBackground: false))
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "power-loss", account: "next write"), value: SecretBytes(utf8: "v")))
        } catch {
            return .unreadable("a key file without its vault, which the next write does not finish: \(error)")
        }
        return VaultReading.absent
    }

    /// The last call made before the cut, and the unsynced ones that reached the disk.
    private static func describe(_ trace: FileTrace, _ state: CrashState) -> String {
        let last = state.point > 0 ? "last: \(trace.operations[state.point - 1].summary)" : "before the first call"
        let durable = CrashStateSpace.durable(trace.operations, point: state.point)
        let kept = (0..<state.point).filter { state.persisted[$0] && !durable[$0] }
        let lost = (0..<state.point).filter { !state.persisted[$0] && !durable[$0] && trace.operations[$0].isNameChange }
        return last + "; unsynced calls kept: \(kept.isEmpty ? "none" : kept.map(String.init).joined(separator: ","))"
            + (lost.isEmpty ? "" : "; name changes lost: " + lost.map { trace.operations[$0].summary }.joined(separator: ", "))
    }

    /// The trace with `fault` put in.
    static func inject(_ fault: Fault, into operations: [FileOperation]) -> [FileOperation] {
        switch fault {
        case .noDirectorySync:
            return operations.filter { if case .syncDirectory = $0 { false } else { true } }
        case .vaultBeforeKey:
            var operations = operations
            guard let vault = operations.firstIndex(where: { if case .link(let path, _) = $0 { path.hasSuffix(".keychain") } else { false } }),
                let key = operations[..<vault].lastIndex(where: { if case .link(let path, _) = $0 { path.hasSuffix(".keychain.key") } else { false } })
            else { return operations }
            let link = operations.remove(at: vault)
            operations.insert(link, at: key)
            return operations
        }
    }

    /// The format fixtures of the test suite, found above this program (in the repository it was built in).
    private static func findFixtures(from program: String) -> String? {
        var directory = (program as NSString).deletingLastPathComponent
        while directory.count > 1 {
            let candidate = directory + "/Tests/KeychainCoreTests/Fixtures/format2"
            if FileManager.default.fileExists(atPath: candidate + "/keyfile.keychain") { return candidate }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return nil
    }
}
