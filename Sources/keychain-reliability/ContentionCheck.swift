import Foundation
import KeychainCore
import KeychainTestSupport
import Valet

#if canImport(Glibc)
    import Glibc
#endif

/// Contention: processes × threads doing mixed set/get/remove/allKeys on one vault. No error
/// may reach a caller, each thread reads back what it wrote, and the vault ends as the
/// acknowledged operations say.
enum ContentionCheck {
    static func run(_ env: CheckEnvironment, processes: Int, threads: Int, operations: Int) -> CheckResult {
        var result = CheckResult("contention (\(processes) processes x \(threads) threads on one vault)")
        let path = env.directory("contention") + "/contention.keychain"
        let started = ContinuousClock.now
        let workers = ContentionWorkers.launch(env, path: path, processes: processes, threads: threads, operations: operations, result: &result)
        let tally = workers.gather()
        let elapsed = started.secondsSince
        tally.report(into: &result, expectedOperations: processes * threads * operations)
        do {
            try tally.checkFinalState(of: try Workers.openVault(path), into: &result)
        } catch {
            result.fail("the vault does not open or verify afterwards: \(error)")
        }
        result.figure("throughput", String(format: "%.0f operations/s over %.1f s", Double(tally.total) / elapsed, elapsed))
        return result
    }
}

/// The contention workers (`keychain-reliability worker contend`), started together on one vault.
struct ContentionWorkers {
    let children: [(pid: pid_t, stdout: Int32)]

    static func launch(
        _ env: CheckEnvironment, path: String, processes: Int, threads: Int, operations: Int, passphraseFile: String? = nil,
        result: inout CheckResult
    ) -> ContentionWorkers {
        var children: [(pid: pid_t, stdout: Int32)] = []
        for process in 0..<processes {
            do {
                children.append(
                    try Subprocess.launchReadingOutput(
                        env.program,
                        [
                            "worker", "contend", path, "\(process)", "\(threads)", "\(operations)",
                            "\(env.seed &+ UInt64(process) &* 104_729)",
                        ] + (passphraseFile.map { [$0] } ?? []),
                        environment: env.workerEnvironment))
            } catch {
                result.fail("cannot start worker \(process): \(error)")
            }
        }
        return ContentionWorkers(children: children)
    }

    /// Reads every worker's report (all at once, so that none blocks on a full pipe) and waits for them.
    func gather() -> ContentionTally {
        let collected = Collector<(Int, String)>()
        let descriptors = children.map(\.stdout)
        DispatchQueue.concurrentPerform(iterations: descriptors.count) { index in
            collected.add((index, Subprocess.readAll(descriptors[index])))
        }
        let outputs = Dictionary(uniqueKeysWithValues: collected.all)
        var tally = ContentionTally()
        for (index, child) in children.enumerated() {
            let status = Subprocess.wait(for: child.pid)
            close(child.stdout)
            if status != 0 { tally.exits.append("worker \(index) exited with status \(status)") }
            for line in (outputs[index] ?? "").split(separator: "\n") {
                let parts = line.split(separator: " ").map(String.init)
                if parts.first == "E", parts.count == 4 {
                    tally.errors += Int(parts[1]) ?? 0
                    tally.inconsistencies += Int(parts[2]) ?? 0
                    tally.total += Int(parts[3]) ?? 0
                } else if parts.first == "K", parts.count == 3 {
                    tally.expected[parts[1]] = .some(parts[2] == "-" ? nil : Int(parts[2]))
                } else if parts.first == "X" {
                    tally.firstErrors.append(String(line.dropFirst(2)))
                }
            }
        }
        return tally
    }
}

/// What the contention workers reported.
struct ContentionTally {
    var errors = 0
    var inconsistencies = 0
    var total = 0
    /// Each key's last acknowledged sequence number (nil: removed).
    var expected: [String: Int?] = [:]
    var firstErrors: [String] = []
    var exits: [String] = []

    func report(into result: inout CheckResult, expectedOperations: Int) {
        for exit in exits { result.fail(exit) }
        if errors > 0 { result.fail("\(errors) operations failed with an error, first: \(firstErrors.prefix(3).joined(separator: "; "))") }
        if inconsistencies > 0 { result.fail("\(inconsistencies) reads disagreed with the thread's own acknowledged writes") }
        if total != expectedOperations { result.fail("\(total) operations reported, \(expectedOperations) expected") }
        result.figure("operations", total)
        result.figure("errors reaching a caller", errors)
        result.figure("lost or stale acknowledged writes", inconsistencies)
    }

    /// The vault holds exactly what the log says: every key at its last acknowledged value, no other key.
    func checkFinalState(of vault: Vault, into result: inout CheckResult) throws {
        try vault.verifyIntegrity()
        let valet = ValetStore.withStore(vault) { Valet.valet(with: Identifier(nonEmpty: "Contention")!, accessibility: .whenUnlocked) }
        let present = try valet.allKeys()
        var mismatched = 0
        for (key, seq) in expected {
            let value: String?
            do { value = try valet.string(forKey: key) } catch .itemNotFound { value = nil }
            if value != seq.map({ "\(key)=\($0)" }) { mismatched += 1 }
        }
        let unexpected = present.subtracting(expected.keys).count
        if mismatched > 0 || unexpected > 0 { result.fail("final state: \(mismatched) keys differ from the log, \(unexpected) keys nobody wrote") }
        result.figure("keys checked against the log", expected.count)
    }
}
