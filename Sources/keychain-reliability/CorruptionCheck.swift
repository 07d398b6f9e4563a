import Foundation
import KeychainCore
import KeychainTestSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Corruption and tampering: seeded random damage to a vault file (bit flips in the SQLite
/// header, in the vault header, in wrapped keys, in item rows, anywhere; pages overwritten;
/// truncation; rows and blobs from a foreign vault pasted in; a damaged key file). Each open
/// or read must end in a clear error or the correct value: never a wrong value, a crash or a hang.
enum CorruptionCheck {
    enum Damage: CaseIterable {
        case flipAnywhere, flipSQLiteHeader, flipVaultHeader, flipWrappedKey, flipItemBlob, overwritePage, truncate
        case foreignRows, foreignBlob, flipKeyFile
    }

    static func run(_ env: CheckEnvironment, trials: Int) -> CheckResult {
        var result = CheckResult("corruption and tampering (seeded random damage)")
        let base = env.directory("corruption")
        let expected = Dictionary(uniqueKeysWithValues: (0..<24).map { ("k\($0)", "value-\($0)-" + String(repeating: "s", count: $0 * 37)) })
        guard let template = makeVault(base + "/template", expected),
            makeVault(base + "/foreign", expected.mapValues { "FOREIGN-" + $0 }) != nil
        else {
            result.fail("cannot build the template vaults")
            return result
        }
        let bytes = [UInt8](FileManager.default.contents(atPath: template.path) ?? Data())
        let keyFile = [UInt8](FileManager.default.contents(atPath: template.path + ".key") ?? Data())
        let targets = Targets(bytes: bytes, path: template.path)
        var random = SeededRandom(seed: env.seed)
        var counts: [String: Int] = [:]
        var openRefused = 0, readsCorrect = 0, readsRefused = 0, wrong = 0
        let watchdog = Watchdog(limit: 30)
        let trialPath = base + "/trial/v.keychain"
        mkdir(base + "/trial", 0o700)
        for trial in 0..<trials {
            let damage = Damage.allCases[random.next(below: Damage.allCases.count)]
            counts["\(damage)", default: 0] += 1
            var file = bytes, key = keyFile
            damageBytes(damage, &file, &key, targets, &random)
            for suffix in ["", ".key", "-wal", "-shm"] { unlink(trialPath + suffix) }
            write(file, to: trialPath, mode: 0o600)
            write(key, to: trialPath + ".key", mode: 0o600)
            if damage == .foreignRows || damage == .foreignBlob {
                pasteForeign(damage, into: trialPath, from: base + "/foreign/v.keychain", &random)
            }
            watchdog.start("trial \(trial) (\(damage))")
            defer { watchdog.stop() }
            let vault: Vault
            do {
                vault = try Workers.openVault(trialPath)
            } catch {
                openRefused += 1
                continue
            }
            for (account, value) in expected {
                do {
                    let items = try vault.copyMatching(
                        Query(
                            .genericPassword, attributes: Attributes(service: "corruption", account: account),
                            limit: .one, returnData: true))
                    if items.first?.value?.string == value {
                        readsCorrect += 1
                    } else {
                        wrong += 1
                        result.fail("trial \(trial) (\(damage)): \(account) read back a wrong value")
                    }
                } catch {
                    readsRefused += 1
                }
            }
            // A listing decrypts every row: damaged or foreign rows must fail, not show.
            if let listed = try? vault.copyMatching(Query(.genericPassword, returnData: true)) {
                for item in listed where item.value?.string != expected[item.attributes.account ?? ""] {
                    wrong += 1
                    result.fail("trial \(trial) (\(damage)): a listing showed a wrong or foreign value")
                }
            }
        }
        result.figure("corruptions tried", trials)
        result.figure("by kind", counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        result.figure("opens refused with an error", openRefused)
        result.figure("reads correct / refused with an error / wrong", "\(readsCorrect) / \(readsRefused) / \(wrong)")
        result.figure("crashes, hangs", "0, 0 (the program would have stopped)")
        return result
    }

    /// Byte ranges worth aiming at: the vault header blob and the wrapped class keys.
    struct Targets {
        var vaultHeader: Range<Int>?
        var wrappedKeys: [Range<Int>] = []
        var itemBlobs: [Range<Int>] = []

        init(bytes: [UInt8], path: String) {
            func locate(_ blob: [UInt8]) -> Range<Int>? {
                guard blob.count >= 8, bytes.count >= blob.count else { return nil }
                for start in 0...(bytes.count - blob.count) where bytes[start] == blob[0] && Array(bytes[start..<(start + blob.count)]) == blob {
                    return start..<(start + blob.count)
                }
                return nil
            }
            vaultHeader = RawSQL.blobs(path, "SELECT value FROM meta WHERE name = 'header'").first.flatMap(locate)
            wrappedKeys = RawSQL.blobs(path, "SELECT wrapped FROM class_keys").compactMap(locate)
            itemBlobs = RawSQL.blobs(path, "SELECT value FROM items UNION ALL SELECT attributes FROM items").compactMap(locate)
        }
    }

    static func damageBytes(_ damage: Damage, _ file: inout [UInt8], _ key: inout [UInt8], _ targets: Targets, _ random: inout SeededRandom) {
        func flip(_ range: Range<Int>, in bytes: inout [UInt8], count: Int) {
            guard !range.isEmpty else { return }
            for _ in 0..<count {
                let at = range.lowerBound + random.next(below: range.count)
                bytes[at] ^= UInt8(1 << random.next(below: 8))
            }
        }
        let flips = 1 + random.next(below: 8)
        switch damage {
        case .flipAnywhere: flip(0..<file.count, in: &file, count: flips)
        case .flipSQLiteHeader: flip(0..<min(100, file.count), in: &file, count: flips)
        case .flipVaultHeader: flip(targets.vaultHeader ?? 0..<file.count, in: &file, count: flips)
        case .flipWrappedKey:
            let range = targets.wrappedKeys.isEmpty ? 0..<file.count : targets.wrappedKeys[random.next(below: targets.wrappedKeys.count)]
            flip(range, in: &file, count: flips)
        case .flipItemBlob:
            let range = targets.itemBlobs.isEmpty ? 0..<file.count : targets.itemBlobs[random.next(below: targets.itemBlobs.count)]
            flip(range, in: &file, count: flips)
        case .overwritePage:
            let pages = max(1, file.count / 4096)
            let start = random.next(below: pages) * 4096
            let zero = random.next(below: 2) == 0
            for i in start..<min(start + 4096, file.count) { file[i] = zero ? 0 : UInt8(truncatingIfNeeded: random.next()) }
        case .truncate:
            file = Array(file.prefix(random.next(below: file.count)))
        case .flipKeyFile:
            flip(0..<key.count, in: &key, count: flips)
        case .foreignRows, .foreignBlob:
            break
        }
    }

    /// Pastes a foreign vault's rows (whole, under new ids) or one of its blobs over one of ours.
    static func pasteForeign(_ damage: Damage, into path: String, from foreign: String, _ random: inout SeededRandom) {
        let row = 1 + random.next(below: 24), other = 1 + random.next(below: 24)
        let column = random.next(below: 2) == 0 ? "value" : "attributes"
        let sql =
            damage == .foreignRows
            ? "ATTACH '\(foreign)' AS f; INSERT INTO items(class, protection, identity, scope, attributes, value) SELECT class, protection, identity, scope, attributes, value FROM f.items;"
            : "ATTACH '\(foreign)' AS f; UPDATE items SET \(column) = (SELECT \(column) FROM f.items WHERE id = \(other)) WHERE id = \(row);"
        RawSQL.exec(path, sql)
    }

    /// A vault with `items` (service "corruption"), closed so that its WAL is folded in.
    static func makeVault(_ directory: String, _ items: [String: String]) -> VaultLocation? {
        mkdir(directory, 0o700)
        let location = VaultLocation(path: directory + "/v.keychain")
        do {
            let vault = try Vault(VaultConfiguration(location: location, usesKernelKeyring: false))
            try vault.write(
                items.sorted { $0.key < $1.key }.enumerated().map { index, pair in
                    .add(
                        Item(
                            .genericPassword,
                            attributes: Attributes(
                                service: "corruption", account: pair.key,
                                accessibility: index % 2 == 0 ? .whenUnlocked : .afterFirstUnlock),
                            value: SecretBytes(utf8: pair.value)))
                })
        } catch {
            return nil
        }
        // Everything checkpointed into the file: the kept WAL is empty.
        let wal = (try? FileManager.default.attributesOfItem(atPath: location.path + "-wal"))?[.size] as? Int ?? 0
        return wal == 0 ? location : nil
    }

    static func write(_ bytes: [UInt8], to path: String, mode: mode_t) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}

/// Stops the program if one trial runs longer than `limit` seconds: a hang is a failure.
final class Watchdog: Sendable {
    /// The trial running and when it began; nil between trials.
    private let current = Mutex<(name: String, started: ContinuousClock.Instant)?>(nil)

    init(limit: Int) {
        Thread.detachNewThread { [weak self] in
            while let self {
                sleep(1)
                if let (name, started) = self.current.withLock({ $0 }), started.secondsSince > Double(limit) {
                    print("FAILURE: \(name) hung for more than \(limit) s")
                    exit(3)
                }
            }
        }
    }

    func start(_ name: String) { current.withLock { $0 = (name, .now) } }
    func stop() { current.withLock { $0 = nil } }
}
