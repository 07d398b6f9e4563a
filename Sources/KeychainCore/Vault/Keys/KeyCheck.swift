/// Key-check values: for each key a process may take from the kernel-keyring cache (the lookup
/// key, the afterFirstUnlock and whenUnlocked class keys), an HMAC of a fixed message under that
/// key, written to the vault by a process that unwrapped the key with the master key. A cached
/// key whose check value does not match the vault's is never used: a same-user process that
/// plants keys under the cache's description (after `keychain lock`, say) gets nothing sealed
/// under them.
enum KeyCheck {
    /// The code the lookup key's check value is stored under (class codes are below 16).
    static let lookupCode: UInt8 = 0xFF

    static func value(of key: SecretBytes, code: UInt8, vaultID: [UInt8]) -> [UInt8] {
        HMACKey(key).authenticationCode(Array("swift-keychain key check v1".utf8) + vaultID + [code])
    }

    /// The stored form: (code, 32-byte check value) pairs.
    static func encode(_ checks: [UInt8: [UInt8]]) -> [UInt8] {
        checks.keys.sorted().flatMap { [$0] + checks[$0]! }
    }

    static func decode(_ bytes: [UInt8]) -> [UInt8: [UInt8]]? {
        guard bytes.count % 33 == 0 else { return nil }
        var checks: [UInt8: [UInt8]] = [:]
        for start in stride(from: 0, to: bytes.count, by: 33) {
            checks[bytes[start]] = Array(bytes[(start + 1)..<(start + 33)])
        }
        return checks
    }

    /// The check values of the keys in `ring` that may be cached.
    static func values(of ring: KeyRing, vaultID: [UInt8]) -> [UInt8: [UInt8]] {
        var checks: [UInt8: [UInt8]] = [:]
        if let lookup = ring.lookup { checks[lookupCode] = value(of: lookup.key, code: lookupCode, vaultID: vaultID) }
        for (accessibility, key) in ring.classes where accessibility.survivesLock || accessibility.opensWithUserUnlock {
            checks[accessibility.code] = value(of: key.key, code: accessibility.code, vaultID: vaultID)
        }
        return checks
    }

    /// Whether every key of `candidate` has the check value `stored` records for it.
    static func verify(_ candidate: KeyRing, against stored: [UInt8: [UInt8]], vaultID: [UInt8]) -> Bool {
        let computed = values(of: candidate, vaultID: vaultID)
        guard candidate.lookup != nil else { return false }
        return computed.allSatisfy { code, value in stored[code].map { Digest.equal($0, value) } ?? false }
    }
}
