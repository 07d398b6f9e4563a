#if canImport(Glibc)
    import Glibc
#endif

/// Another process's rotation, as this one finds it: keys it holds that the vault no longer
/// vouches for are dropped before they seal or open anything, and the new ones awaited.
extension VaultState {
    /// True (and this process's keys dropped) when the keys it holds are not the vault's any
    /// more: another process rotated them. Checked before each write and when a seal does not
    /// open, by the lookup key's check value, so nothing is ever sealed under retired keys.
    func dropKeysIfRotated() throws(StoreError) -> Bool {
        guard let lookup = lockState.keys.lookup else { return false }
        let bytes = try storedKeyChecks()
        guard let bytes, let stored = KeyCheck.decode(bytes)?[KeyCheck.lookupCode] else { return false }
        guard !Digest.equal(stored, lookupCheck(lookup)) else { return false }
        lockState.keysRetired()
        try database.refreshHeader()
        return true
    }

    /// After this process found its keys retired by another process's rotation (mutex held):
    /// waits briefly for the rotating process to publish the new keys to the kernel keyring,
    /// which it does right after its commit. True when they arrived (the write may go again).
    func awaitRotatedKeys() throws(StoreError) -> Bool {
        guard configuration.usesKernelKeyring, header.hasPassphrase else { return false }
        for _ in 0..<RotationRetry.publicationLooks {
            try loadImplicitKeys()
            if lockState.keys.lookup != nil { return true }
            usleep(RotationRetry.publicationInterval)
        }
        return false
    }
}
