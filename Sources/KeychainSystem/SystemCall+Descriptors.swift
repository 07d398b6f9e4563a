#if canImport(Glibc)
    import Glibc
#endif

/// The calls on descriptors themselves: pipes, copies onto a given number, whether one is open.
extension SystemCall {
    /// `pipe(2)`, both ends close-on-exec (and non-blocking with `nonBlocking`): the read end
    /// first. Glibc's module does not export `pipe2`, so the flags are set by `fcntl(2)` before
    /// the ends are handed out.
    package static func pipe(nonBlocking: Bool = false) throws(Errno) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        _ = try valueOrErrno("pipe", path: nil) { Glibc.pipe(&ends) }
        do {
            for end in ends {
                _ = try valueOrErrno("fcntl", path: nil) { fcntl(end, F_SETFD, FD_CLOEXEC) }
                if nonBlocking {
                    let flags = try valueOrErrno("fcntl", path: nil) { fcntl(end, F_GETFL) }
                    _ = try valueOrErrno("fcntl", path: nil) { fcntl(end, F_SETFL, flags | O_NONBLOCK) }
                }
            }
        } catch {
            for end in ends { close(end) }
            throw error
        }
        return (ends[0], ends[1])
    }

    /// `dup2(2)`: `fd` copied onto the descriptor `target` (closing what `target` was).
    static func duplicate(_ fd: Int32, onto target: Int32) throws(Errno) {
        _ = try valueOrErrno("dup2", path: nil) { dup2(fd, target) }
    }

    /// Opens `path` as the descriptor `fd`, a standard descriptor (0, 1 or 2) that is closed,
    /// and leaves it open across `exec` as standard descriptors are (the one descriptor
    /// ``open(_:_:mode:)`` makes that a child inherits).
    package static func openStandard(_ fd: Int32, _ path: String, _ flags: Int32) throws(Errno) {
        let opened = try open(path, flags)
        if opened == fd {
            _ = try valueOrErrno("fcntl", path: path) { fcntl(fd, F_SETFD, 0) }
        } else {
            // dup2 leaves the copy without close-on-exec.
            defer { close(opened) }
            try duplicate(opened, onto: fd)
        }
    }

    /// Whether `fd` is an open descriptor of this process (`fcntl(2)` `F_GETFD` does not fail
    /// with `EBADF`).
    package static func isOpen(_ fd: Int32) -> Bool {
        do { _ = try valueOrErrno("fcntl", path: nil) { fcntl(fd, F_GETFD) } } catch { return error.code != EBADF }
        return true
    }
}
