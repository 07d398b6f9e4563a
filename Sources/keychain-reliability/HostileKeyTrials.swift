import CKeyring
import COpenSSL
import Foundation
import KeychainCore
import KeychainTestSupport

/// The hostile-file check's trials on a fresh passphrase vault with the kernel keyring on, where
/// what is attacked is the keys a same-user process can reach: random keys planted under the
/// cache's description after `keychain lock`, and the presence public key swapped for one the
/// attacker picked, tagged with the lookup key the cache gives away. No item may be sealed under
/// a planted key or to a swapped one, and no read may return a wrong value.
enum HostileKeyTrials {
    enum Attack { case plantedCache, swappedPresenceKey }

    struct Outcome {
        var correct = 0, wrong = 0, refused = 0
        var failures: [String] = []
    }

    static let passphrase = "hostile-passphrase"
    static let accounts = ["alpha-0", "alpha-1", "bravo-0", "bravo-1"]

    static func item(_ account: String, _ value: String, control: AccessControl? = nil) -> Item {
        Item(
            .genericPassword,
            attributes: Attributes(
                service: String(account.split(separator: "-")[0]), account: account,
                accessibility: .afterFirstUnlock, accessControl: control), value: SecretBytes(utf8: value))
    }

    static func query(_ account: String, _ authenticator: ScriptedAuthenticator? = nil) -> Query {
        Query(
            .genericPassword, attributes: Attributes(service: String(account.split(separator: "-")[0]), account: account), limit: .one, returnData: true,
            authentication: authenticator.map { AuthenticationContext(authenticator: $0) })
    }

    static func run(_ attack: Attack, in directory: String, trial: Int, _ random: inout SeededRandom, _ outcome: inout Outcome) {
        let location = VaultLocation(path: directory + "/p.keychain")
        let configuration = VaultConfiguration(location: location, idleTimeout: nil, scryptParameters: .minimum, usesKernelKeyring: true)
        var description = ""
        defer {
            // Each trial's vault is new: what it left in the user's keyring goes with it.
            for suffix in ["", ":unlocked"] { remove(description + suffix) }
        }
        do {
            let vault = try Vault(configuration)
            try vault.write(accounts.map { .add(item($0, "value-\($0)")) })
            try vault.changePassphrase(from: nil, to: SecretBytes(utf8: passphrase))
            try vault.add(item("bravo-pin", "1234", control: .userPresence))
            let header = RawSQL.blobs(location.path, "SELECT value FROM meta WHERE name = 'header'").first ?? []
            guard header.count > 22 else { throw StoreError.corrupted("no header") }
            description = "swift-keychain:v1:" + header[6..<22].map { String(format: "%02x", $0) }.joined()
            let rows = RawSQL.blobs(location.path, "SELECT identity FROM items").count
            switch attack {
            case .plantedCache:
                vault.forgetCachedKeys()
                let payload = bytes(32, &random) + [2] + bytes(32, &random)
                _ = payload.withUnsafeBytes { ckeyring_add_user_key(description, $0.baseAddress, $0.count, CKEYRING_SPEC_USER_KEYRING) }
            case .swappedPresenceKey:
                guard let lookup = load(description)?.prefix(32), lookup.count == 32,
                    let record = RawSQL.blobs(location.path, "SELECT value FROM meta WHERE name = 'presence'").first, !record.isEmpty
                else { throw StoreError.unavailable("no cache to read the lookup key from") }
                let attackerKey = bytes(32, &random)
                let tag = hmac(Array(lookup), Array("presence public key".utf8) + attackerKey)
                let forged = [record[0]] + attackerKey + tag + bytes(32 + 28, &random)
                RawSQL.exec(location.path, "UPDATE meta SET value = x'\(forged.map { String(format: "%02x", $0) }.joined())' WHERE name = 'presence'")
            }

            // What the attacker hopes for: a program writing new secrets under its keys.
            let program = try Vault(configuration)
            for account in accounts { tally(try? program.copyMatching(query(account)).first?.value?.string, "value-\(account)", account, trial, attack, &outcome) }
            let probes = [item("alpha-probe", "probe-value"), item("bravo-probe", "presence-probe", control: .userPresence)]
            for probe in probes { if (try? program.add(probe)) == nil { outcome.refused += 1 } }
            if attack == .swappedPresenceKey, (try? vault.add(item("alpha-after", "sealed-to-whom", control: .userPresence))) != nil {
                outcome.wrong += 1
                outcome.failures.append("trial \(trial) (\(attack)): a presence item was sealed to a swapped public key")
            }
            let written = RawSQL.blobs(location.path, "SELECT identity FROM items").count - rows

            // The owner, with the passphrase: everything reads as written; nothing written is unreadable.
            let owner = try Vault(configuration)
            try owner.unlock(passphrase: SecretBytes(utf8: passphrase))
            for account in accounts { tally(try? owner.copyMatching(query(account)).first?.value?.string, "value-\(account)", account, trial, attack, &outcome) }
            let probe = try? owner.copyMatching(query("alpha-probe")).first?.value?.string
            if written > 0 && probe != "probe-value" {
                outcome.wrong += 1
                outcome.failures.append("trial \(trial) (\(attack)): an item written after the attack does not open with the vault's own keys")
            }
            if attack == .plantedCache {
                let pin = try? owner.copyMatching(query("bravo-pin", ScriptedAuthenticator([.passphrase(passphrase)]))).first?.value?.string
                tally(pin, "1234", "bravo-pin", trial, attack, &outcome)
            }
        } catch {
            outcome.refused += 1
        }
    }

    static func tally(_ found: String?, _ expected: String, _ account: String, _ trial: Int, _ attack: Attack, _ outcome: inout Outcome) {
        guard let found else { outcome.refused += 1; return }
        if found == expected {
            outcome.correct += 1
        } else {
            outcome.wrong += 1
            outcome.failures.append("trial \(trial) (\(attack)): \(account) read a wrong value")
        }
    }

    static func load(_ description: String) -> [UInt8]? {
        let key = ckeyring_search_user_key(CKEYRING_SPEC_USER_KEYRING, description)
        guard key >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = ckeyring_read(key, &buffer, buffer.count)
        return n > 0 ? Array(buffer.prefix(n)) : nil
    }

    static func remove(_ description: String) {
        guard !description.isEmpty else { return }
        let key = ckeyring_search_user_key(CKEYRING_SPEC_USER_KEYRING, description)
        if key >= 0 { _ = ckeyring_invalidate(key) }
    }

    /// HMAC-SHA256, as an attacker holding the cached lookup key computes a tag.
    static func hmac(_ key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &out, &length)
        return out
    }

    /// The attacker's keys, from the check's seeded generator, so that `--seed` replays a trial.
    static func bytes(_ count: Int, _ random: inout SeededRandom) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
}
