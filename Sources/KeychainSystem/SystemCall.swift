#if canImport(Glibc)
    import Glibc
#endif

/// One function per system call the package makes on files and descriptors: each turns the
/// C convention (-1 and `errno`) into a thrown ``Errno`` naming the call and its path, and
/// retries a call a signal interrupted (`EINTR`) in the one place that does,
/// ``valueOrErrno(_:path:retryOnInterrupt:_:)``.
package enum SystemCall {
    /// Runs `body` until it returns something other than -1 or fails with something other
    /// than `EINTR` (with `retryOnInterrupt`), and throws that failure as an ``Errno``. Internal:
    /// a call the other modules need gets its function here, so that none retries its own way.
    static func valueOrErrno<Value: FixedWidthInteger>(
        _ call: String, path: String?, retryOnInterrupt: Bool = true, _ body: () -> Value
    ) throws(Errno) -> Value {
        while true {
            let value = body()
            if value != -1 { return value }
            let failure = Errno.current(call: call, path: path)
            if !(retryOnInterrupt && failure.isInterrupted) { throw failure }
        }
    }

    /// `open(2)`, with `O_CLOEXEC` always added: no descriptor leaks into a child.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
        try valueOrErrno("open", path: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// `close(2)`, never retried: on Linux the descriptor is gone even when it reports `EINTR`,
    /// and a retry could close one another thread has just opened.
    package static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// `read(2)` into `buffer`: the number of bytes read, 0 at the end of the input.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String? = nil) throws(Errno) -> Int {
        try valueOrErrno("read", path: path) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// `write(2)` of `bytes`: how many were written (possibly fewer than given).
    package static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String? = nil) throws(Errno) -> Int {
        try valueOrErrno("write", path: path) { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// Writes every byte of `bytes`, with as many `write(2)` calls as it takes.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String? = nil) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]), path: path)
        }
    }

    /// Writes every byte of `text` (never a secret: those stay in `SecretBytes`).
    package static func writeAll(_ fd: Int32, _ text: String, path: String? = nil) throws(Errno) {
        try Array(text.utf8).withUnsafeBytes { bytes in Result { () throws(Errno) in try writeAll(fd, bytes, path: path) } }.get()
    }

    /// `fsync(2)`.
    package static func fsync(_ fd: Int32, path: String? = nil) throws(Errno) {
        _ = try valueOrErrno("fsync", path: path) { Glibc.fsync(fd) }
    }

    /// `fstat(2)`.
    package static func fstat(_ fd: Int32, path: String? = nil) throws(Errno) -> stat {
        var info = Glibc.stat()
        _ = try valueOrErrno("fstat", path: path) { Glibc.fstat(fd, &info) }
        return info
    }

    /// `lstat(2)`: the entry at `path` itself, never what a link there points to.
    package static func lstat(_ path: String) throws(Errno) -> stat {
        var info = Glibc.stat()
        _ = try valueOrErrno("lstat", path: path) { Glibc.lstat(path, &info) }
        return info
    }

    /// `stat(2)`: what `path` names, through links.
    package static func stat(_ path: String) throws(Errno) -> Glibc.stat {
        var info = Glibc.stat()
        _ = try valueOrErrno("stat", path: path) { followingLinks(path, &info) }
        return info
    }

    /// `link(2)`: a second name, `path`, for the file at `existing`; fails with `EEXIST`
    /// rather than replace anything.
    package static func link(_ existing: String, _ path: String) throws(Errno) {
        _ = try valueOrErrno("link", path: path) { Glibc.link(existing, path) }
    }

    /// `rename(2)`: `path` replaced by the file at `existing`, atomically.
    package static func rename(_ existing: String, _ path: String) throws(Errno) {
        _ = try valueOrErrno("rename", path: path) { Glibc.rename(existing, path) }
    }

    /// `waitpid(2)` for one child until it ends: its wait status.
    package static func waitpid(_ pid: pid_t) throws(Errno) -> Int32 {
        var status: Int32 = 0
        _ = try valueOrErrno("waitpid", path: nil) { Glibc.waitpid(pid, &status, 0) }
        return status
    }

    /// `fchmod(2)`: the open file's mode set to `mode`, whatever the process's umask made it.
    static func fchmod(_ fd: Int32, _ mode: mode_t, path: String? = nil) throws(Errno) {
        _ = try valueOrErrno("fchmod", path: path) { Glibc.fchmod(fd, mode) }
    }

    /// `realpath(3)`: `path` with every link, `.` and `..` resolved.
    package static func realpath(_ path: String) throws(Errno) -> String {
        guard let resolved = Glibc.realpath(path, nil) else { throw Errno.current(call: "realpath", path: path) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `readlink(2)`: what the symbolic link at `path` holds (as `/proc/self/exe`, this
    /// program's own file).
    package static func readlink(_ path: String) throws(Errno) -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = try buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(Errno) in
                try valueOrErrno("readlink", path: path) { Glibc.readlink(path, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count - 1) }
            }
        }.get()
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// `mkdir(2)`.
    static func mkdir(_ path: String, mode: mode_t) throws(Errno) {
        _ = try valueOrErrno("mkdir", path: path) { Glibc.mkdir(path, mode) }
    }

    /// `unlink(2)`.
    package static func unlink(_ path: String) throws(Errno) {
        _ = try valueOrErrno("unlink", path: path) { Glibc.unlink(path) }
    }
}

/// `stat(2)` by a name the ``SystemCall/stat(_:)`` wrapper does not hide.
private func followingLinks(_ path: String, _ info: inout Glibc.stat) -> Int32 {
    stat(path, &info)
}
