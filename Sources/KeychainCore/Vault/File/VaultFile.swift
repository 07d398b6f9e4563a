import FoundationEssentials
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The vault's files as the file system holds them, treated as places another user, or a
/// careless one, may have edited: who owns them, what they are, and how a new vault comes to
/// exist without ever replacing anything.
///
/// - The directory must be owned by the effective user and not writable by others (else they
///   could move the vault away and plant another).
/// - The vault, its key file and SQLite's companions must be regular files, not symbolic links,
///   owned by the effective user and closed to others (mode 0600).
/// - A vault is created whole in a temporary file and linked into place, so a vault file is
///   never seen half made, and a key file is linked into place too: `link` fails rather than
///   replace an existing file. A missing vault beside an existing key file is refused, since it
///   most probably means the vault was moved: creating a new one would orphan the old one's key.
enum VaultFile {
    /// What `lstat` says of a path: nothing there, or what is there.
    enum Entry {
        case missing
        case present(stat)
    }

    static func entry(_ path: String) throws(StoreError) -> Entry {
        do { return .present(try SystemCall.lstat(path)) } catch {
            if error.code == ENOENT || error.code == ENOTDIR { return .missing }
            throw failure("inspect", path, error.code)
        }
    }

    /// Refuses a directory owned by someone else, or writable by group or others.
    static func checkDirectory(_ path: String) throws(StoreError) {
        let directory = path.isEmpty ? "." : path
        let info: stat
        do { info = try SystemCall.stat(directory) } catch { throw failure("inspect", directory, error.code) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .untrusted(path: directory, reason: "it is not a directory") }
        try checkOwner(info, directory)
        if info.st_mode & 0o022 != 0 {
            throw .untrusted(
                path: directory,
                reason: "other users may write in it (mode \(octal(info.st_mode))), so they could replace the vault; use a directory only you can write (mode 0700)")
        }
    }

    /// Refuses what is not a regular file of the effective user's, closed to others; true when
    /// there is a file, false when there is none.
    @discardableResult
    static func checkFile(_ path: String) throws(StoreError) -> Bool {
        guard case .present(let info) = try entry(path) else { return false }
        try checkRegularFile(info, path)
        return true
    }

    static func checkRegularFile(_ info: stat, _ path: String) throws(StoreError) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: throw .untrusted(path: path, reason: "it is a symbolic link; the vault's files are never followed through links")
        default: throw .untrusted(path: path, reason: "it is not a regular file")
        }
        try checkOwner(info, path)
        if info.st_mode & 0o077 != 0 { throw .insecurePermissions(path: path) }
    }

    private static func checkOwner(_ info: stat, _ path: String) throws(StoreError) {
        let me = geteuid()
        guard info.st_uid == me else {
            throw .untrusted(path: path, reason: "it belongs to uid \(info.st_uid), not to you (uid \(me)); a vault is used only by its owner")
        }
    }

    /// Checks the directory, the vault, its key file and SQLite's companions.
    static func checkAll(_ location: VaultLocation) throws(StoreError) {
        try checkDirectory(location.directory)
        for path in [location.path, location.keyFilePath] + location.companionPaths { try checkFile(path) }
    }

    /// Reads the key file through one descriptor opened without following links, checked
    /// with `fstat` (so the file checked is the file read).
    static func readKeyFile(_ path: String) throws(StoreError) -> SecretBytes {
        let fd: Int32
        do { fd = try SystemCall.open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY) } catch {
            switch error.code {
            case ENOENT: throw .corrupted("the key file \(path) is missing")
            case ELOOP: throw .untrusted(path: path, reason: "it is a symbolic link; the vault's files are never followed through links")
            default: throw failure("open", path, error.code)
            }
        }
        defer { SystemCall.close(fd) }
        let info: stat
        do { info = try SystemCall.fstat(fd, path: path) } catch { throw failure("inspect", path, error.code) }
        try checkRegularFile(info, path)
        do { return try FileSystem.readAll(fd: fd, limit: 64, path: path) } catch { throw failure("read", path, error.code) }
    }

    /// Writes a new file at `path` whole and durably, never replacing one: a 0600 temporary
    /// file in the same directory, fsync, `link` into place (which fails if `path` exists),
    /// fsync of the directory.
    /// - Returns: false when `path` already existed (nothing was written there).
    static func createExclusively(_ contents: SecretBytes, at path: String, syncDirectory: Bool = true) throws(StoreError) -> Bool {
        let temporary = temporaryName(for: path)
        let fd: Int32
        do { fd = try SystemCall.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600) } catch {
            throw failure("create", temporary, error.code)
        }
        defer { try? SystemCall.unlink(temporary) }
        do {
            defer { SystemCall.close(fd) }
            try contents.withUnsafeBytes { (bytes) throws(Errno) in try SystemCall.writeAll(fd, bytes, path: temporary) }
            try SystemCall.fsync(fd, path: temporary)
        } catch {
            throw failure("write", temporary, error.code)
        }
        return try linkIntoPlace(temporary, path, syncDirectory: syncDirectory)
    }

    /// Links a finished temporary file into place and removes its temporary name (and makes
    /// both durable, unless the caller links another file next and syncs once after it);
    /// false when `path` exists already (the temporary name is then left to the caller).
    static func linkIntoPlace(_ temporary: String, _ path: String, syncDirectory: Bool = true) throws(StoreError) -> Bool {
        do { try SystemCall.link(temporary, path) } catch {
            if error.code == EEXIST { return false }
            throw failure("link", path, error.code)
        }
        // Before the directory sync: a temporary name that outlived a power cut would be a
        // second name of the file (a key file, a vault, an archive) that no process removes.
        try? SystemCall.unlink(temporary)
        if syncDirectory { FileSystem.syncDirectory(of: path) }
        return true
    }

    /// Waits up to two seconds for a file to appear at `path` (another process creating it).
    static func waitForFile(_ path: String) -> Bool {
        for _ in 0..<100 {
            if case .present? = try? entry(path) { return true }
            usleep(20_000)
        }
        return false
    }

    /// A name beside `path` that no other process uses.
    static func temporaryName(for path: String) -> String {
        path + ".new-\(getpid())-" + Digest.hex(Random.bytes(6))
    }

    /// Overwrites a file's bytes with zeros, syncs them, then removes it: an old key file must
    /// not stay readable on disk after it stopped being used.
    static func destroy(_ path: String) {
        if let fd = try? SystemCall.open(path, O_WRONLY | O_NOFOLLOW) {
            if let info = try? SystemCall.fstat(fd, path: path), info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 {
                let zeros = [UInt8](repeating: 0, count: Int(info.st_size))
                zeros.withUnsafeBytes { bytes in _ = try? SystemCall.writeAll(fd, bytes, path: path) }
                try? SystemCall.fsync(fd, path: path)
            }
            SystemCall.close(fd)
        }
        FileSystem.remove(path)
    }

    private static func failure(_ operation: String, _ path: String, _ code: Int32) -> StoreError {
        let reason = String(cString: strerror(code))
        if code == EACCES || code == EPERM { return .io("cannot \(operation) \(path): permission denied") }
        return .io("cannot \(operation) \(path): \(reason)")
    }

    private static func octal(_ mode: mode_t) -> String {
        "0" + String(mode & 0o7777, radix: 8)
    }
}
