#if canImport(Glibc)
    import Glibc
#endif

/// How an operation keeps up with another process rotating the vault's keys (a rekey, a
/// passphrase change): the one policy for every layer that meets one.
///
/// - A call that finds the vault locked unlocks with the configured passphrase and runs again
///   (``Vault``), and an unlock whose header a rotation retired starts again
///   (``VaultEngine/unlock(passphrase:forUser:)``): each at most ``attempts`` times. Each new
///   attempt follows another process's committed rotation, so the bound only ends a run of
///   rotations back to back, as an owner rekeying in a loop makes.
/// - A read or write that finds the keys it holds retired waits for the rotating process to
///   publish the new ones to the kernel keyring (which it does right after its commit), for
///   ``publicationLooks`` looks ``publicationInterval`` apart, then runs once more
///   (``VaultState/afterRotation(_:)``).
enum RotationRetry {
    /// How often an unlock, or a call that unlocks on need, runs at most.
    static let attempts = 16
    /// How many times a process whose keys were retired looks for the new ones.
    static let publicationLooks = 40
    /// The pause between two of those looks, in microseconds: together about a second.
    static let publicationInterval: useconds_t = 25_000
}
