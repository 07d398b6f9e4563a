import CKeyring
import Foundation
import KeychainCore
import KeychainSystem
import KeychainTestSupport
import Valet

#if canImport(Glibc)
    import Glibc
#endif

/// The child processes the checks start, kill and inspect. Each writes its protocol to
/// standard output with write(2), one line per event, so that what the parent reads after a
/// SIGKILL is exactly what the child had said.
enum Workers {
    static func openVault(_ path: String) throws -> Vault {
        try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false))
    }

    /// A passphrase vault as the key-change check's processes open it: the cheapest scrypt
    /// (thousands of rounds), and unlocked on need from `passphraseFile`.
    static func openVault(_ path: String, passphraseFile: String) throws -> Vault {
        try Vault(
            VaultConfiguration(
                location: VaultLocation(path: path), scryptParameters: .minimum, usesKernelKeyring: false,
                passphraseEnvironment: ["KEYCHAIN_PASSPHRASE_FILE": passphraseFile]))
    }

    static func say(_ line: String) {
        try? SystemCall.writeAll(STDOUT_FILENO, line + "\n")
    }

    /// The value written for `key` at sequence `seq`: its length varies (up to 64 KiB now and
    /// then) so that kills land inside writes of every size.
    static func crashValue(key: String, seq: Int) -> String {
        let length = seq % 17 == 0 ? 65_536 : 64 + (seq * 7919) % 2_000
        return "crash-\(key)-\(seq)-" + String(repeating: "v", count: length)
    }

    static let crashKeys = (0..<16).map { "key-\($0)" }

    /// Creates new vaults one after another in `directory` (each by its first write), until killed.
    static func createVaults(in directory: String) throws -> Int32 {
        say("ready")
        var index = 0
        while true {
            let vault = try openVault("\(directory)/v\(index).keychain")
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "create", account: "first"), value: SecretBytes(utf8: "v")))
            index += 1
        }
    }

    /// Sets and removes random keys through Valet forever, announcing each operation before
    /// ("B S key seq" or "B R key") and acknowledging it after ("A").
    static func crash(vaultPath: String, firstSeq: Int, seed: UInt64) throws -> Int32 {
        let vault = try openVault(vaultPath)
        ValetStore.setDefault(vault)
        let valet = Valet.valet(with: Identifier(nonEmpty: "Crash")!, accessibility: .afterFirstUnlock)
        var random = SeededRandom(seed: seed)
        var seq = firstSeq
        say("ready")
        while true {
            let key = crashKeys[Int(random.next() % UInt64(crashKeys.count))]
            if random.next() % 4 == 0 {
                say("B R \(key)")
                try valet.removeObject(forKey: key)
            } else {
                seq += 1
                say("B S \(key) \(seq)")
                try valet.setString(crashValue(key: key, seq: seq), forKey: key)
            }
            say("A")
        }
    }

    /// One process of the contention check: `threads` threads, each doing `operations` mixed
    /// operations on its own keys (checked against its own log) and reads of everyone's.
    /// Prints "E errors inconsistencies operations" and then "K key seq" or "K key -" per key,
    /// and "X error" for the first errors. With `passphraseFile`, the vault has a passphrase.
    static func contend(vaultPath: String, process: Int, threads: Int, operations: Int, seed: UInt64, passphraseFile: String? = nil) throws -> Int32 {
        let vault = try passphraseFile.map { try openVault(vaultPath, passphraseFile: $0) } ?? openVault(vaultPath)
        ValetStore.setDefault(vault)
        let valet = Valet.valet(with: Identifier(nonEmpty: "Contention")!, accessibility: .whenUnlocked)
        let results = Collector<ThreadReport>()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SeededRandom(seed: seed &+ UInt64(thread) &* 7_919)
            var model: [String: Int] = [:]
            let keys = (0..<8).map { "p\(process)-t\(thread)-k\($0)" }
            var errors = 0, inconsistencies = 0
            for op in 0..<operations {
                let key = keys[Int(random.next() % UInt64(keys.count))]
                do {
                    switch random.next() % 10 {
                    case 0..<4:
                        let seq = op + 1
                        try valet.setString("\(key)=\(seq)", forKey: key)
                        model[key] = seq
                    case 4..<6:
                        try valet.removeObject(forKey: key)
                        model[key] = nil
                    case 6..<8:
                        let expected = model[key].map { "\(key)=\($0)" }
                        let found: String?
                        do throws(KeychainError) { found = try valet.string(forKey: key) } catch .itemNotFound { found = nil }
                        if found != expected { inconsistencies += 1 }
                    case 8:
                        let all = try valet.allKeys()
                        for (mine, _) in model where !all.contains(mine) { inconsistencies += 1 }
                    default:
                        let other = "p\(random.next() % 8)-t\(random.next() % UInt64(threads))-k\(random.next() % 8)"
                        do throws(KeychainError) { _ = try valet.string(forKey: other) } catch .itemNotFound {}
                    }
                } catch {
                    if errors < 3 { say("X \(error): \(FailureLog.last.map { "\($0)" } ?? "no reason kept")") }
                    errors += 1
                }
            }
            results.add(
                ThreadReport(
                    errors: errors, inconsistencies: inconsistencies, operations: operations,
                    final: keys.map { ($0, model[$0]) }))
        }
        let reports = results.all
        say("E \(reports.map(\.errors).reduce(0, +)) \(reports.map(\.inconsistencies).reduce(0, +)) \(reports.map(\.operations).reduce(0, +))")
        for (key, seq) in reports.flatMap(\.final).sorted(by: { $0.0 < $1.0 }) { say("K \(key) \(seq.map(String.init) ?? "-")") }
        return 0
    }

    /// Reads a secret from `secretPath` (then deletes the file), stores and reads it through
    /// Valet's Data API, wipes its own copies (the caller's part), releases every object, then
    /// says "released" and waits to be inspected (and killed). Any copy left is the library's.
    static func memory(vaultPath: String, secretPath: String) throws -> Int32 {
        do {
            let fd = open(secretPath, O_RDONLY)
            guard fd >= 0 else { throw StoreError.io("cannot read the secret file") }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = read(fd, &buffer, buffer.count)
            close(fd)
            unlink(secretPath)
            guard count > 0 else { throw StoreError.io("empty secret file") }
            var secret = Data(buffer[0..<count])
            buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) }
            let vault = try openVault(vaultPath)
            try ValetStore.withStore(vault) {
                let valet = Valet.valet(with: Identifier(nonEmpty: "Memory")!, accessibility: .whenUnlocked)
                try valet.setObject(secret, forKey: "token")
                var back = try valet.object(forKey: "token")
                guard back == secret else { throw StoreError.itemNotFound }
                back.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) }
            }
            secret.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) }
        }
        say("released")
        // Then, when asked, the secret read back and held as the library hands it out: in a
        // SecretBytes, which lives in OpenSSL's secure heap.
        while access(vaultPath + ".hold", F_OK) != 0 { usleep(10_000) }
        let held = try openVault(vaultPath).copyMatching(Query(.genericPassword, attributes: Attributes(account: "token"), limit: .one, returnData: true))
        say("holding \(held.first?.value?.count ?? 0)")
        while true { sleep(60) }
    }

    /// Fills the vault under a file-size limit until a write fails; says "F <stored count> <error>".
    static func fileSizeLimit(vaultPath: String, limit: Int) throws -> Int32 {
        signal(SIGXFSZ, SIG_IGN)
        var rl = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rl)
        let vault = try openVault(vaultPath)
        var stored = 0
        while stored < 100_000 {
            do {
                try vault.upsert(
                    Item(
                        .genericPassword, attributes: Attributes(service: "fill", account: "k\(stored)"),
                        value: SecretBytes(utf8: String(repeating: "x", count: 4_096))))
                stored += 1
            } catch {
                say("F \(stored) \(error)")
                return 0
            }
        }
        say("F \(stored) no failure")
        return 0
    }

    /// Tries to read a file (as another user); says "read <n>" or "denied <errno text>".
    static func probeRead(_ path: String) -> Int32 {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { say("denied \(String(cString: strerror(errno)))"); return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = read(fd, &buffer, buffer.count)
        say(n >= 0 ? "read \(n)" : "denied \(String(cString: strerror(errno)))")
        return 0
    }

    /// Tries to open the vault and read an item (as another user, or after a change of modes).
    static func probeVault(_ path: String) -> Int32 {
        do {
            let vault = try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false, createIfMissing: false))
            let items = try vault.copyMatching(Query(.genericPassword, returnData: true))
            say("opened \(items.count)")
        } catch {
            say("refused \(error)")
        }
        return 0
    }
}

extension Workers {
    /// Tries to read a kernel key by serial (as another user); says "read <n>" or "denied <errno text>".
    static func probeKey(_ serial: Int32) -> Int32 {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = ckeyring_read(serial, &buffer, buffer.count)
        say(n >= 0 ? "read \(n)" : "denied \(String(cString: strerror(errno)))")
        return 0
    }
}

/// What one contention thread reports: its counts, and the last acknowledged state of its keys.
struct ThreadReport {
    let errors: Int, inconsistencies: Int, operations: Int
    let final: [(String, Int?)]
}
