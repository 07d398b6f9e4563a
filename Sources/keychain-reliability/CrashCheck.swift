import Foundation
import KeychainCore
import KeychainTestSupport
import Valet

#if canImport(Glibc)
    import Glibc
#endif

/// Crash safety: a worker sets and removes keys through Valet; the parent SIGKILLs it at a
/// random moment, then checks that the vault opens, passes SQLite's integrity check, holds
/// every acknowledged write with its full value, and shows nothing half-written (a key is
/// either as last acknowledged or as the operation in flight left it).
enum CrashCheck {
    static func run(_ env: CheckEnvironment, kills: Int) -> CheckResult {
        var result = CheckResult("crash safety (SIGKILL during Valet writes)")
        let path = env.directory("crash") + "/crash.keychain"
        var model = [String: Int?](uniqueKeysWithValues: Workers.crashKeys.map { ($0, nil) })
        var random = SeededRandom(seed: env.seed)
        var seq = 0, acknowledged = 0, duringOperation = 0, inFlightApplied = 0
        // Sets only: a removal of a key no vault holds yet is acknowledged and creates nothing.
        var acknowledgedSets = 0
        for round in 0..<kills {
            let launched: (pid: pid_t, stdout: Int32)
            do {
                launched = try Subprocess.launchReadingOutput(
                    env.program, ["worker", "crash", path, "\(seq)", "\(env.seed &+ UInt64(round))"],
                    environment: env.workerEnvironment)
            } catch {
                result.fail("cannot start the worker: \(error)")
                return result
            }
            usleep(useconds_t(5_000 + random.next(below: 75_000)))
            kill(launched.pid, SIGKILL)
            let status = Subprocess.wait(for: launched.pid)
            let lines = Subprocess.readAll(launched.stdout).split(separator: "\n").map(String.init)
            close(launched.stdout)
            if status != 128 + SIGKILL {
                result.fail("round \(round): the worker exited by itself (status \(status)) before the kill")
                continue
            }
            // Replay the worker's log: acknowledged operations, and the one in flight.
            var pending: (key: String, seq: Int?)?
            for line in lines {
                let parts = line.split(separator: " ").map(String.init)
                switch parts.first {
                case "B" where parts.count >= 3:
                    pending = (parts[2], parts[1] == "S" ? Int(parts[3]) : nil)
                    if let s = pending?.seq { seq = max(seq, s) }
                case "A":
                    if let done = pending {
                        model[done.key] = .some(done.seq)
                        acknowledged += 1
                        if done.seq != nil { acknowledgedSets += 1 }
                    }
                    pending = nil
                default: break
                }
            }
            if pending != nil { duringOperation += 1 }
            // Check the vault as the next process would find it.
            do {
                let vault = try Workers.openVault(path)
                // Killed before its first set completed: no vault, which is right while no set
                // was acknowledged (reads, and removals of keys no vault holds, create none).
                if !vault.status().exists {
                    if acknowledgedSets > 0 {
                        // A status reads an open that failed as no vault: say which it was.
                        let files = (try? FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)) ?? []
                        let opening: String
                        do {
                            try vault.verifyIntegrity()
                            opening = "it opens and verifies now"
                        } catch {
                            opening = "opening it: \(error)"
                        }
                        result.fail(
                            "round \(round): the vault reads as absent after \(acknowledgedSets) acknowledged sets (files: \(files.sorted().joined(separator: ", ")); \(opening))"
                        )
                    }
                    continue
                }
                try vault.verifyIntegrity()
                let valet = ValetStore.withStore(vault) { Valet.valet(with: Identifier(nonEmpty: "Crash")!, accessibility: .afterFirstUnlock) }
                for key in Workers.crashKeys {
                    let observed: Int?
                    do {
                        let value = try valet.string(forKey: key)
                        guard let parsed = parseSeq(value, key: key), value == Workers.crashValue(key: key, seq: parsed) else {
                            result.fail("round \(round): \(key) holds a damaged or foreign value (\(value.count) bytes)")
                            continue
                        }
                        observed = parsed
                    } catch .itemNotFound {
                        observed = nil
                    }
                    if observed == model[key]! { continue }
                    if let pending, pending.key == key, observed == pending.seq {
                        inFlightApplied += 1
                        model[key] = .some(observed)
                        continue
                    }
                    result.fail("round \(round): \(key) is \(observed.map { "seq \($0)" } ?? "absent"), acknowledged \(model[key]!.map { "seq \($0)" } ?? "absent")")
                    model[key] = .some(observed)
                }
            } catch {
                result.fail("round \(round): the vault does not open or verify after the kill: \(error)")
            }
        }
        checkCreation(env, kills: max(20, kills / 3), &result)
        result.figure("kills survived", kills)
        result.figure("kills that landed inside an operation", duringOperation)
        result.figure("in-flight operations found committed", inFlightApplied)
        result.figure("acknowledged operations, all found", acknowledged)
        result.figure("integrity checks passed", kills - result.failures.filter { $0.contains("does not open") }.count)
        return result
    }

    /// SIGKILLs a worker that creates vault after vault: every vault it leaves is whole, and
    /// no key file is left without its vault (which would read as a vault moved away, and
    /// keep its location from ever being used again).
    private static func checkCreation(_ env: CheckEnvironment, kills: Int, _ result: inout CheckResult) {
        var random = SeededRandom(seed: env.seed &+ 7)
        var created = 0
        var finished = 0
        for round in 0..<kills {
            let directory = env.directory("create-\(round)")
            guard let launched = try? Subprocess.launchReadingOutput(env.program, ["worker", "create", directory], environment: env.workerEnvironment) else {
                result.fail("cannot start the creating worker")
                return
            }
            _ = Subprocess.readOutput(launched.stdout, until: "ready")
            usleep(useconds_t(1_000 + random.next(below: 40_000)))
            kill(launched.pid, SIGKILL)
            _ = Subprocess.wait(for: launched.pid)
            close(launched.stdout)
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for keyFile in files where keyFile.hasSuffix(".keychain.key") {
                let vault = String(keyFile.dropLast(4))
                guard files.contains(vault) else {
                    // Killed between its two links: the next write must finish the creation.
                    do {
                        try Workers.openVault(directory + "/" + vault).add(
                            Item(.genericPassword, attributes: Attributes(service: "create", account: "after"), value: SecretBytes(utf8: "v")))
                        finished += 1
                    } catch {
                        result.fail("round \(round): a killed creation left the key file \(keyFile) without a vault the next write could finish: \(error)")
                    }
                    continue
                }
                do {
                    try Workers.openVault(directory + "/" + vault).verifyIntegrity()
                    created += 1
                } catch {
                    result.fail("round \(round): a vault the killed creator left does not open: \(error)")
                }
            }
        }
        result.figure("vault creations killed", "\(kills) kills, \(created) vaults left whole, \(finished) interrupted between the links and finished by the next write")
    }

    private static func parseSeq(_ value: String, key: String) -> Int? {
        let prefix = "crash-\(key)-"
        guard value.hasPrefix(prefix) else { return nil }
        return Int(value.dropFirst(prefix.count).prefix { $0 != "-" })
    }
}
