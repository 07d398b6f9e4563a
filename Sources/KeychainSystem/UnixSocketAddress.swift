#if canImport(Glibc)
    import Glibc
#endif

/// Where a Unix socket is bound or connects: a path in the file system, or a name in the
/// abstract namespace (no file is made, and the kernel forgets the name with the socket).
package struct UnixSocketAddress {
    var storage = sockaddr_un()
    let length: socklen_t

    /// The most bytes a path or a name can have.
    package static var capacity: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// The socket at `path`; nil when the path is too long for a socket's address.
    package init?(path: String) {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.capacity else { return nil }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes + [0]) }
        length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    }

    /// The abstract name `name`; nil when it is longer than ``capacity``.
    package init?(abstract name: [UInt8]) {
        guard name.count <= Self.capacity else { return nil }
        storage.sun_family = sa_family_t(AF_UNIX)
        // sun_path[0] stays 0: that is what makes the name abstract.
        withUnsafeMutableBytes(of: &storage.sun_path) { path in
            for (index, byte) in name.enumerated() { path[index + 1] = byte }
        }
        length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.count)
    }

    func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}

extension SystemCall {
    /// `socket(2)`: a Unix socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`), close-on-exec.
    package static func unixSocket(_ type: __socket_type) throws(Errno) -> Int32 {
        try valueOrErrno("socket", path: nil) { Glibc.socket(AF_UNIX, Int32(type.rawValue | SOCK_CLOEXEC.rawValue), 0) }
    }

    /// `bind(2)` of `fd` to `address` (`EADDRINUSE` when another socket holds it).
    package static func bind(_ fd: Int32, to address: UnixSocketAddress, path: String? = nil) throws(Errno) {
        _ = try valueOrErrno("bind", path: path) { address.withSocketAddress { Glibc.bind(fd, $0, $1) } }
    }

    /// `connect(2)` of `fd` to `address` (`ECONNREFUSED` when nothing listens there). Never
    /// made again after `EINTR`: the connection goes on in the kernel, and a second call
    /// would fail with `EALREADY`.
    package static func connect(_ fd: Int32, to address: UnixSocketAddress, path: String? = nil) throws(Errno) {
        _ = try valueOrErrno("connect", path: path, retryOnInterrupt: false) { address.withSocketAddress { Glibc.connect(fd, $0, $1) } }
    }

    /// `access(2)`: whether this process may use `path` as `mode` asks (`F_OK`: it exists;
    /// `X_OK`: it may run it).
    package static func accessible(_ path: String, _ mode: Int32) -> Bool {
        Glibc.access(path, mode) == 0
    }
}
