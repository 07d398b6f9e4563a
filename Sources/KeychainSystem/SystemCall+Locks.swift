#if canImport(Glibc)
    import Glibc
#endif

/// The calls on POSIX record locks.
extension SystemCall {
    /// `fcntl(2)` `F_GETLK`: the process holding a lock on `fd`'s file that would conflict with
    /// a write lock on all of it; nil when none does.
    package static func writeLockHolder(_ fd: Int32, path: String? = nil) throws(Errno) -> pid_t? {
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 0
        _ = try valueOrErrno("fcntl", path: path) { fcntl(fd, F_GETLK, &probe) }
        return probe.l_type == Int16(F_UNLCK) ? nil : probe.l_pid
    }

    /// `fcntl(2)` `F_SETLK`: takes a write lock on all of `fd`'s file without waiting for it;
    /// false when another process holds a lock on it (`EACCES` or `EAGAIN`). The kernel lets
    /// it go when the process ends, or closes any descriptor of the file.
    package static func tryWriteLock(_ fd: Int32, path: String? = nil) throws(Errno) -> Bool {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        do {
            _ = try valueOrErrno("fcntl", path: path) { fcntl(fd, F_SETLK, &lock) }
        } catch  where error.code == EACCES || error.code == EAGAIN {
            return false
        }
        return true
    }
}
