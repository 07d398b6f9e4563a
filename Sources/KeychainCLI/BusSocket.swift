import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// What is at the path of a user's bus socket (`$XDG_RUNTIME_DIR/bus`).
enum BusSocket {
    enum State: Equatable {
        /// A socket of the user's that accepts a connection: a bus is there.
        case answers
        /// A socket of the user's that nothing listens on (a bus that died).
        case stale
        case absent
        /// Something that is not the user's socket (the reason).
        case foreign(String)
    }

    static func probe(_ path: String) -> State {
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT ? .absent : .foreign("cannot be examined: \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { return .foreign("is not a socket") }
        guard info.st_uid == getuid() else { return .foreign("belongs to another user") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .foreign("cannot be tried: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return .foreign("is too long a path for a socket") }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if connected == 0 { return .answers }
        return errno == ECONNREFUSED ? .stale : .foreign("does not answer: \(String(cString: strerror(errno)))")
    }
}
