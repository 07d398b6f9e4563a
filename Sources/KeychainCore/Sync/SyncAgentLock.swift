internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The lock that makes one sync agent per vault: a POSIX record lock on `<vault>.sync-agent`,
/// held for as long as the agent runs and released by the kernel when it exits, however it
/// exits. Whoever wants to know whether an agent runs asks the kernel who holds the lock, so
/// a stale file means nothing and asking writes nothing.
package final class SyncAgentLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { SystemCall.close(descriptor) }

    /// The lock file of the vault at `location`.
    static func path(_ location: VaultLocation) -> String { location.path + ".sync-agent" }

    /// Takes the lock of the vault at `location`, for this process's lifetime (or until the
    /// returned lock is released); nil when another process holds it.
    ///
    /// - Throws: ``StoreError/io(_:)`` when the lock file cannot be made (its directory
    ///   missing or not writable), ``StoreError/untrusted(path:reason:)`` when it is not a
    ///   regular file of this user.
    package static func acquire(for location: VaultLocation) throws(StoreError) -> SyncAgentLock? {
        let path = path(location)
        let fd: Int32
        do { fd = try SystemCall.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY, mode: 0o600) } catch {
            throw .io("cannot open \(path): \(error.reason)")
        }
        guard let info = try? SystemCall.fstat(fd, path: path), info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid() else {
            SystemCall.close(fd)
            throw .untrusted(path: path, reason: "the sync agent's lock is not a regular file of this user")
        }
        guard (try? SystemCall.tryWriteLock(fd, path: path)) == true else {
            SystemCall.close(fd)
            return nil
        }
        return SyncAgentLock(descriptor: fd)
    }

    /// The process id of the sync agent of the vault at `location`, or nil when none runs.
    /// Opens the lock file for reading and asks the kernel; changes nothing. Never for the
    /// agent itself: a POSIX lock goes with the first descriptor of the file its process closes.
    package static func holder(for location: VaultLocation) -> pid_t? {
        let path = path(location)
        guard let fd = try? SystemCall.open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK) else { return nil }
        defer { SystemCall.close(fd) }
        return try? SystemCall.writeLockHolder(fd, path: path)
    }
}
