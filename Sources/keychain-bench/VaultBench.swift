import Foundation
import KeychainCore
import KeychainTestSupport
import Valet
import ValetNaming

/// Our vault through Valet, in-process, on a vault holding `items` keys.
struct VaultBench {
    let directory: String
    let items: Int
    let runs: Int
    let vault: Vault
    let valet: Valet
    let keys: [String]

    init(directory: String, items: Int, runs: Int) throws {
        self.directory = directory
        self.items = items
        self.runs = runs
        vault = try Vault(VaultConfiguration(location: VaultLocation(path: "\(directory)/bench-\(items).keychain"), usesKernelKeyring: false))
        valet = ValetStore.withStore(vault) { Valet.valet(with: Identifier(nonEmpty: "Bench")!, accessibility: .whenUnlocked) }
        keys = (0..<items).map { "key-\($0)" }
        // Populate through the store's batch write (one transaction), addressing items exactly as the Valet does.
        let base = ValetAddress.valet(with: Identifier(nonEmpty: "Bench")!, accessibility: .whenUnlocked).baseAttributes
        for chunk in stride(from: 0, to: items, by: 10_000) {
            let operations = keys[chunk..<min(chunk + 10_000, items)].map { key -> WriteOperation in
                var attributes = base
                attributes.account = key
                return .upsert(Item(.genericPassword, attributes: attributes, value: SecretBytes(utf8: "value-of-\(key)-0123456789abcdef")))
            }
            try vault.write(operations)
        }
    }

    func randomKeys(_ count: Int, seed: UInt64) -> [String] {
        var generator = SeededRandom(seed: seed)
        return (0..<count).map { _ in keys[Int.random(in: 0..<keys.count, using: &generator)] }
    }

    /// The durable sets of the "setString" row, once, for a round paired with the floor's upserts.
    func durableSets(_ keys: [String], round: Int) throws {
        for key in keys { try valet.setString("paired-\(round)-\(key)", forKey: key) }
    }

    func measureAll(reads: Int, writes: Int) throws -> [Measurement] {
        let group = "vault via Valet, \(items.formatted()) items"
        var out: [Measurement] = []
        let readKeys = randomKeys(reads, seed: 1)
        out.append(
            Measurement(
                name: "string(forKey:)", group: group,
                rates: try Clock.rates(runs: runs, operations: reads) { _ in
                    for key in readKeys { _ = try valet.string(forKey: key) }
                }))
        out.append(
            Measurement(
                name: "containsObject(forKey:)", group: group,
                rates: try Clock.rates(runs: runs, operations: reads) { _ in
                    for key in readKeys { _ = try valet.containsObject(forKey: key) }
                }))
        let writeKeys = randomKeys(writes, seed: 2)
        out.append(
            Measurement(
                name: "setString (durable, each committed)", group: group,
                rates: try Clock.rates(runs: runs, operations: writes) { run in
                    for key in writeKeys { try valet.setString("new-\(run)-\(key)", forKey: key) }
                }))
        out.append(
            Measurement(
                name: "allKeys()", group: group,
                rates: try Clock.rates(runs: runs, operations: 1) { _ in
                    let all = try valet.allKeys()
                    precondition(all.count == items)
                }, note: "calls per second; decrypts attributes only"))
        let removeKeys = Array(Set(writeKeys))
        var removeRates: [Double] = []
        for _ in 0...runs {
            let start = Clock.now()
            for key in removeKeys { try valet.removeObject(forKey: key) }
            removeRates.append(Double(removeKeys.count) / (Double(Clock.now() - start) / 1e9))
            for key in removeKeys { try valet.setString("back-\(key)", forKey: key) }
        }
        out.append(Measurement(name: "removeObject (durable)", group: group, rates: Array(removeRates.dropFirst())))
        return out
    }

    /// 10,000 upserts in one transaction: the write a Valet migration of that size performs.
    func batchWrite(count: Int) throws -> Measurement {
        let base = ValetAddress.valet(with: Identifier(nonEmpty: "Bench")!, accessibility: .whenUnlocked).baseAttributes
        let rates = try Clock.rates(runs: runs, operations: 1) { run in
            let operations = (0..<count).map { index -> WriteOperation in
                var attributes = base
                attributes.service = "migrated"
                attributes.account = "migrated-\(index)"
                return .upsert(Item(.genericPassword, attributes: attributes, value: SecretBytes(utf8: "value-\(run)-\(index)")))
            }
            try vault.write(operations)
        }
        return Measurement(
            name: "\(count.formatted())-item batch write in one transaction", group: "vault", rates: rates,
            note: "the write of a migration; Valet's migrateObjects joins with its issue")
    }
}
