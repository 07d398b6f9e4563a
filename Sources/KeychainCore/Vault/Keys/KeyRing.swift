/// The keys a vault holds in memory, and what locking drops.
///
/// - `master`: the vault master key, present while unlocked (always, for a key-file vault).
/// - `lookup`: the HMAC key of the lookup digests; survives `lock()` like afterFirstUnlock keys,
///   because it protects no secret value, only the names it digests.
/// - `classes`: unwrapped class keys, one per accessibility class.
struct KeyRing {
    var master: SecretBytes?
    var lookup: HMACKey?
    /// Derived from the lookup key (``ItemLedger``); goes with it.
    var ledger: HMACKey?
    /// Seals the sync journal and state (``VaultState/journalKey()``); goes with the lookup key.
    var journal: SealingKey?
    var classes: [Accessibility: SealingKey] = [:]

    /// Drops what `lock()` drops: the master key and every class key that does not survive a lock.
    mutating func lock() {
        master = nil
        classes = classes.filter { $0.key.survivesLock }
    }

    /// Adopts `master` and the lookup key derived from it. Class keys held from another master
    /// key are another rotation's: kept, they would be returned as they are instead of
    /// unwrapped anew, and seal rows no current key opens.
    mutating func adopt(master newMaster: SecretBytes, lookup newLookup: HMACKey) {
        if master.map({ $0 != newMaster }) ?? true { classes.removeAll() }
        master = newMaster
        lookup = newLookup
        ledger = nil
        journal = nil
    }

    /// Holds `key` as the class key of `accessibility`, or drops it (nil).
    mutating func hold(_ key: SealingKey?, for accessibility: Accessibility) { classes[accessibility] = key }

    mutating func hold(ledgerKey: HMACKey) { ledger = ledgerKey }
    mutating func hold(journalKey: SealingKey) { journal = journalKey }

    /// Takes the lookup key and the class keys of `candidate` that this ring lacks.
    mutating func adoptMissing(from candidate: KeyRing) {
        if lookup == nil { lookup = candidate.lookup }
        for (accessibility, key) in candidate.classes where classes[accessibility] == nil { classes[accessibility] = key }
    }

    /// Drops the class keys of the classes `which` picks.
    mutating func dropClasses(_ which: (Accessibility) -> Bool) {
        classes = classes.filter { !which($0.key) }
    }

    mutating func wipeAll() {
        master = nil
        lookup = nil
        ledger = nil
        journal = nil
        classes = [:]
    }

    /// The kernel-keyring payload for the classes `included` picks: the lookup key, then
    /// (code, key) for each such class this ring holds. Nil if there is nothing worth caching.
    func cachePayload(of included: (Accessibility) -> Bool = { $0.survivesLock }) -> SecretBytes? {
        guard let lookup else { return nil }
        let survivors = classes.filter { included($0.key) }.sorted { $0.key.code < $1.key.code }
        let count = 32 + survivors.count * 33
        return SecretBytes(count: count) { out in
            lookup.key.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 32) }
            var offset = 32
            for (accessibility, key) in survivors {
                out[offset] = accessibility.code
                key.key.withUnsafeBytes { (out.baseAddress! + offset + 1).copyMemory(from: $0.baseAddress!, byteCount: 32) }
                offset += 33
            }
        }
    }

    /// Adopts the keys of a cache payload whose classes `allowed` accepts; false if it is
    /// malformed or holds any other class.
    mutating func adopt(cachePayload payload: SecretBytes, allowed: (Accessibility) -> Bool = { $0.survivesLock }) -> Bool {
        payload.withUnsafeBytes { bytes in
            guard bytes.count >= 32, (bytes.count - 32) % 33 == 0 else { return false }
            var found: [Accessibility: SealingKey] = [:]
            var offset = 32
            while offset < bytes.count {
                guard let accessibility = Accessibility(code: bytes[offset]), allowed(accessibility) else { return false }
                found[accessibility] = SealingKey(SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[(offset + 1)..<(offset + 33)])))
                offset += 33
            }
            lookup = lookup ?? HMACKey(SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<32])))
            for (accessibility, key) in found where classes[accessibility] == nil {
                classes[accessibility] = key
            }
            return true
        }
    }
}

extension Accessibility {
    /// The classes the user's unlocked state opens in every process of the user: whenUnlocked
    /// and whenUnlockedThisDeviceOnly (never the passcode class, which needs the passphrase in
    /// the reading process).
    var opensWithUserUnlock: Bool { self == .whenUnlocked || self == .whenUnlockedThisDeviceOnly }
}
