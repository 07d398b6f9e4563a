import Foundation
import KeychainCore
import KeychainTestSupport
import Valet

#if canImport(Glibc)
    import Glibc
#endif

/// Key changes beside writers: the contention workers write a passphrase vault (unlocking
/// themselves from a passphrase file) while this process, as the owner would, rotates its keys,
/// changes its passphrase, takes backups and restores them elsewhere, and exports every item,
/// in seeded order, as fast as they go. Nothing acknowledged may be lost, no row damaged, and
/// no error may reach a writer (a rotation is a wait, never "tampered").
enum KeyChangeContentionCheck {
    static func run(_ env: CheckEnvironment, processes: Int, threads: Int, operations: Int) -> CheckResult {
        var result = CheckResult("key changes beside writers (\(processes) processes x \(threads) threads; rekeys, passphrase changes, backups, restores, exports)")
        let directory = env.directory("keychanges")
        let path = directory + "/keychanges.keychain"
        let passphraseFile = directory + "/passphrase"
        let passphrase = SecretBytes(utf8: "key-change check \(env.seed)")
        let owner: Vault
        do {
            _ = FileManager.default.createFile(atPath: passphraseFile, contents: Data("key-change check \(env.seed)".utf8), attributes: [.posixPermissions: 0o600])
            owner = try Workers.openVault(path, passphraseFile: passphraseFile)
            try owner.changePassphrase(from: nil, to: passphrase)
        } catch {
            result.fail("cannot make the passphrase vault: \(error)")
            return result
        }
        let started = ContinuousClock.now
        let workers = ContentionWorkers.launch(
            env, path: path, processes: processes, threads: threads, operations: operations, passphraseFile: passphraseFile, result: &result)
        let finished = DispatchSemaphore(value: 0)
        let gathered = Collector<ContentionTally>()
        DispatchQueue.global().async {
            gathered.add(workers.gather())
            finished.signal()
        }
        var random = SeededRandom(seed: env.seed &* 31 &+ 7)
        var done: [String: Int] = [:]
        var failures: [String] = []
        var round = 0
        while finished.wait(timeout: .now()) == .timedOut {
            round += 1
            let operation = ["rekey", "passphrase change", "backup and restore", "export"][Int(random.next() % 4)]
            do {
                switch operation {
                case "rekey":
                    try owner.rekey(passphrase: passphrase)
                case "passphrase change":
                    try owner.changePassphrase(from: passphrase, to: passphrase)
                case "backup and restore":
                    try backupAndRestore(owner, directory: directory, round: round, passphrase: passphrase)
                default:
                    _ = try owner.copyMatching(Query(.genericPassword, returnData: true))
                }
                done[operation, default: 0] += 1
            } catch StoreError.itemNotFound where operation == "export" {
                done[operation, default: 0] += 1
            } catch {
                failures.append("\(operation): \(error)")
            }
        }
        let tally = gathered.all[0]
        let elapsed = started.secondsSince
        tally.report(into: &result, expectedOperations: processes * threads * operations)
        for failure in failures.prefix(5) { result.fail("the owner's \(failure)") }
        do {
            let check = try Workers.openVault(path, passphraseFile: passphraseFile)
            try check.unlock(passphrase: passphrase)
            try tally.checkFinalState(of: check, into: &result)
            let report = try check.verify()
            if !report.isSound { result.fail("verify afterwards: ledger \(report.ledger), \(report.damaged.count) damaged rows") }
            result.figure("damaged rows afterwards", report.damaged.count)
        } catch {
            result.fail("the vault does not open or verify afterwards: \(error) (\(FailureLog.last.map { "\($0)" } ?? "no reason kept"))")
        }
        for (operation, count) in done.sorted(by: { $0.key < $1.key }) { result.figure("\(operation)s", count) }
        result.figure("owner operations that failed", failures.count)
        result.figure("throughput", String(format: "%.0f writer operations/s over %.1f s", Double(tally.total) / elapsed, elapsed))
        return result
    }

    /// A backup of the live vault, restored in a directory of its own, opens with the
    /// passphrase and verifies sound.
    private static func backupAndRestore(_ owner: Vault, directory: String, round: Int, passphrase: SecretBytes) throws {
        let backup = directory + "/backup-\(round).keychain"
        try owner.backup(to: backup)
        let place = directory + "/restored-\(round)"
        mkdir(place, 0o700)
        let restored = try Workers.openVault(place + "/restored.keychain", passphraseFile: "/nonexistent")
        try restored.restore(from: backup)
        let copy = try Workers.openVault(place + "/restored.keychain", passphraseFile: "/nonexistent")
        try copy.unlock(passphrase: passphrase)
        let report = try copy.verify()
        guard report.isSound else { throw StoreError.corrupted("the restored backup \(backup) verifies as ledger \(report.ledger), \(report.damaged.count) damaged") }
        for file in [backup, place + "/restored.keychain"] { unlink(file) }
        try? FileManager.default.removeItem(atPath: place)
    }
}
