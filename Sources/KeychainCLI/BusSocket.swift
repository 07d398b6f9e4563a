import FoundationEssentials
import KeychainCore
internal import KeychainSystem

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
        let info: stat
        do { info = try SystemCall.lstat(path) } catch { return error.code == ENOENT ? .absent : .foreign("cannot be examined: \(error.reason)") }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { return .foreign("is not a socket") }
        guard info.st_uid == getuid() else { return .foreign("belongs to another user") }
        guard let address = UnixSocketAddress(path: path) else { return .foreign("is too long a path for a socket") }
        let fd: Int32
        do { fd = try SystemCall.unixSocket(SOCK_STREAM) } catch { return .foreign("cannot be tried: \(error.reason)") }
        defer { SystemCall.close(fd) }
        do { try SystemCall.connect(fd, to: address, path: path) } catch {
            return error.code == ECONNREFUSED ? .stale : .foreign("does not answer: \(error.reason)")
        }
        return .answers
    }
}
