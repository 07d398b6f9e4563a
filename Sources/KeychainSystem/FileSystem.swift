import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The few file operations the vault needs, with the modes and durability it promises.
package enum FileSystem {
    static func exists(_ path: String) -> Bool {
        (try? SystemCall.lstat(path)) != nil
    }

    /// Creates `path` and missing parents with mode 0700, each made durable in its parent
    /// (a directory's entry is the parent's data: without that fsync a power cut can take the
    /// new directory, and the vault linked and synced inside it, away).
    package static func createDirectory(_ path: String) throws(Errno) {
        if exists(path) { return }
        let parent = FileSystem.parent(of: path)
        if !parent.isEmpty && parent != path { try createDirectory(parent) }
        do { try SystemCall.mkdir(path, mode: 0o700) } catch  where error.code == EEXIST { return }
        syncDirectory(of: path)
    }

    /// Whether two paths name one file (the same device and inode).
    package static func sameFile(_ a: String, _ b: String) -> Bool {
        guard let first = try? SystemCall.lstat(a), let second = try? SystemCall.lstat(b) else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// Creates an empty file with mode 0600, failing if it exists, so SQLite (which gives its
    /// -wal and -shm files the database's mode) never creates anything more open.
    package static func createPrivateFile(_ path: String) throws(Errno) {
        SystemCall.close(try SystemCall.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600))
    }

    /// Replaces the file at `path` whole, atomically: `write` fills a new file beside it
    /// (`path.new`, never through a link there), which is given `mode`, made durable and renamed
    /// over `path`; on any failure the new file is removed and `path` is as it was.
    package static func replaceFile(_ path: String, mode: mode_t, write: (Int32) throws(Errno) -> Void) throws(Errno) {
        let temporary = path + ".new"
        let fd = try SystemCall.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: mode)
        do {
            defer { SystemCall.close(fd) }
            try write(fd)
            try SystemCall.fchmod(fd, mode, path: temporary)
            try SystemCall.fsync(fd, path: temporary)
            try SystemCall.rename(temporary, path)
        } catch {
            try? SystemCall.unlink(temporary)
            throw error
        }
        syncDirectory(of: path)
    }

    /// The names in the directory at `path`, without `.` and `..`.
    package static func entryNames(in path: String) throws(Errno) -> [String] {
        guard let directory = opendir(path) else { throw Errno.current(call: "opendir", path: path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// This program's own file, as `/proc/self/exe` names it; nil where it cannot be read.
    package static var ownExecutable: String? {
        try? SystemCall.readlink("/proc/self/exe")
    }

    package static func remove(_ path: String) {
        try? SystemCall.unlink(path)
        syncDirectory(of: path)
    }

    package static func syncDirectory(of path: String) {
        let directory = FileSystem.parent(of: path)
        sync(directory.isEmpty ? "." : directory, flags: O_DIRECTORY)
    }

    /// Flushes the file at `path` to disk, so that a file linked into place afterwards is whole
    /// after a crash. Best effort, as ``syncDirectory(of:)``.
    package static func syncFile(_ path: String) {
        sync(path, flags: 0)
    }

    private static func sync(_ path: String, flags: Int32) {
        guard let fd = try? SystemCall.open(path, O_RDONLY | flags) else { return }
        try? SystemCall.fsync(fd, path: path)
        SystemCall.close(fd)
    }
}

extension FileSystem {
    /// The directory part of `path`, as NSString's `deletingLastPathComponent` ("/a/b" -> "/a",
    /// "/a" -> "/", "a" -> "").
    package static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// `path` made absolute against the working directory (`~` paths are left for ``standardized(_:home:)``).
    package static func absolute(_ path: String) -> String {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.hasPrefix("~") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let directory = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return directory + "/" + path
    }

    /// `path` with `~` expanded and `.`, `..` and repeated slashes removed, as NSString's
    /// `standardizingPath` does for the paths a vault is given.
    package static func standardized(_ path: String, home: String? = ProcessEnvironment.value("HOME")) -> String {
        // What a vault is almost always given is already standard: returned as it is, without
        // splitting it into Characters (a fifth of a millisecond of a command's start).
        if isStandardAbsolute(path) { return path }
        return standardizedComponentwise(path, home: home)
    }

    /// ``standardized(_:home:)`` without its shortcut.
    static func standardizedComponentwise(_ path: String, home: String?) -> String {
        var path = path
        if path == "~" || path.hasPrefix("~/"), let home { path = home + path.dropFirst() }
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == ".." {
                if let last = parts.last, last != ".." { parts.removeLast() } else if !absolute { parts.append(part) }
            } else {
                parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    /// Whether `path` is absolute and has no empty, `.` or `..` component and no trailing slash.
    static func isStandardAbsolute(_ path: String) -> Bool {
        var utf8 = path.utf8.makeIterator()
        guard utf8.next() == UInt8(ascii: "/") else { return false }
        // The bytes of the component being read: dots only so far, and how many.
        var length = 0, dots = 0
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "/") {
                if length == 0 || (dots == length && length <= 2) { return false }
                length = 0
                dots = 0
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        // "/" alone is standard; otherwise the last component must be a real name.
        return path.utf8.count == 1 || (length > 0 && !(dots == length && length <= 2))
    }
}

extension FileSystem {
    /// The home directory of this process's user, from the password database.
    package static func homeDirectoryOfUser() -> String {
        guard let entry = getpwuid(getuid()), let home = entry.pointee.pw_dir else { return "/" }
        return String(cString: home)
    }
}
