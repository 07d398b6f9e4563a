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
        var children: [(pid: pid_t, stdout: Int32)] = []
        for process in 0..<processes {
            do {
                children.append(
                    try Subprocess.launchReadingOutput(
                        env.program,
                        [
                            "worker", "contend", path, "\(process)", "\(threads)", "\(operations)",
                            "\(env.seed &+ UInt64(process) &* 104_729)",
                        ],
                        environment: env.workerEnvironment))
            } catch {
                result.fail("cannot start worker \(process): \(error)")
            }
        }
        // Read every child's output concurrently so that none blocks on a full pipe.
        let collected = Collector<(Int, String)>()
        let descriptors = children.map(\.stdout)
        DispatchQueue.concurrentPerform(iterations: descriptors.count) { index in
            collected.add((index, Subprocess.readAll(descriptors[index])))
        }
        let outputs = Dictionary(uniqueKeysWithValues: collected.all)
        var expected: [String: Int?] = [:]
        var errors = 0, inconsistencies = 0, total = 0
        for (index, child) in children.enumerated() {
            let status = Subprocess.wait(for: child.pid)
            close(child.stdout)
            if status != 0 { result.fail("worker \(index) exited with status \(status)") }
            for line in (outputs[index] ?? "").split(separator: "\n") {
                let parts = line.split(separator: " ").map(String.init)
                if parts.first == "E", parts.count == 4 {
                    errors += Int(parts[1]) ?? 0; inconsistencies += Int(parts[2]) ?? 0; total += Int(parts[3]) ?? 0
                } else if parts.first == "K", parts.count == 3 {
                    expected[parts[1]] = .some(parts[2] == "-" ? nil : Int(parts[2]))
                }
            }
        }
        let elapsed = started.secondsSince
        if errors > 0 { result.fail("\(errors) operations failed with an error") }
        if inconsistencies > 0 { result.fail("\(inconsistencies) reads disagreed with the thread's own acknowledged writes") }
        if total != processes * threads * operations { result.fail("\(total) operations reported, \(processes * threads * operations) expected") }
        do {
            let vault = try Workers.openVault(path)
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
        } catch {
            result.fail("the vault does not open or verify afterwards: \(error)")
        }
        result.figure("operations", total)
        result.figure("errors reaching a caller", errors)
        result.figure("lost or stale acknowledged writes", inconsistencies)
        result.figure("throughput", String(format: "%.0f operations/s over %.1f s", Double(total) / elapsed, elapsed))
        return result
    }
}
