import FoundationEssentials
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A place a new vault file is about to be written (a restore's target, a backup's or a
/// recovery's destination), checked so that the new file can never share a file with another
/// vault: SQLite finds a database's `-wal` and `-shm` by name, so a `-wal` left beside a vault
/// that was moved away (or still written by a process that has that vault open) would be read
/// into the new file, mixing two vaults.
enum VaultDestination {
    /// Refuses `location` unless its vault and key file are absent and no SQLite sidecar there
    /// belongs to a vault: sidecars another process holds open (named with that process), or a
    /// `-wal` with content, are refused; an empty `-wal` and a `-shm` nobody holds are removed.
    /// - Throws: ``StoreError/invalidArgument(_:)`` saying which file is there and what to do.
    static func requireFree(_ location: VaultLocation, for purpose: String) throws(StoreError) {
        if case .present(let info) = try VaultFile.entry(location.path), info.st_mode & S_IFMT == S_IFDIR {
            throw .invalidArgument("\(location.path) is a directory: name the file to write in it (for example \(location.path)/keychain.keychain)")
        }
        for file in [location.path, location.keyFilePath] {
            guard case .missing = try VaultFile.entry(file) else {
                throw .invalidArgument("\(file) already exists; \(purpose) never writes over a file: move it away first")
            }
        }
        let present = presentSidecars(of: location)
        guard !present.isEmpty else { return }
        if let holder = holder(of: location.path + "-shm") {
            throw .invalidArgument(
                "\(location.path)-shm is held open by process \(holder.pid) (\(holder.name)), which still uses the vault that was at \(location.path); stop it first (\(purpose) would share its files)"
            )
        }
        // A -wal that is not empty holds writes no checkpoint has put into their vault yet.
        if case .present(let info)? = try? VaultFile.entry(location.path + "-wal"), info.st_size > 0 {
            throw .invalidArgument(
                "\(location.path)-wal is left from the vault that was at \(location.path) and may hold its last writes: move it beside that vault under the same name plus -wal (or remove it if that vault is gone), then run \(purpose) again"
            )
        }
        // Empty and held by no one, they belong to no vault any more: they go, lest a new file take them for its own.
        for sidecar in present { try? SystemCall.unlink(sidecar) }
    }

    /// The process holding SQLite's shared-memory lock on `shm`: every connection that has the
    /// database open in WAL mode keeps a shared lock there. Nil when none does (or the file is
    /// not there).
    static func holder(of shm: String) -> (pid: pid_t, name: String)? {
        guard let fd = try? SystemCall.open(shm, O_RDONLY | O_NOFOLLOW | O_NOCTTY) else { return nil }
        defer { SystemCall.close(fd) }
        guard let holder = try? SystemCall.writeLockHolder(fd, path: shm) else { return nil }
        return (holder, processName(holder))
    }

    private static func processName(_ pid: pid_t) -> String {
        let path = "/proc/\(pid)/comm"
        guard let fd = try? SystemCall.open(path, O_RDONLY) else { return "unknown" }
        defer { SystemCall.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { (try? SystemCall.read(fd, into: $0, path: path)) ?? 0 }
        guard count > 0 else { return "unknown" }
        let name = buffer[0..<count].prefix { $0 != UInt8(ascii: "\n") }
        return String(decoding: name, as: UTF8.self)
    }

    /// Removes the sidecars that reading the vault at `location` created beside it (those in
    /// `before` were there already and stay), unless another process holds them now.
    static func removeSidecars(of location: VaultLocation, except before: [String]) {
        guard holder(of: location.path + "-shm") == nil else { return }
        for sidecar in location.companionPaths where !before.contains(sidecar) { try? SystemCall.unlink(sidecar) }
    }

    /// The sidecars present beside `location` now.
    static func presentSidecars(of location: VaultLocation) -> [String] {
        location.companionPaths.filter { if case .present? = try? VaultFile.entry($0) { true } else { false } }
    }
}
