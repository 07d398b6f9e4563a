internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Makes the user's processes take turns at a read, change and replace of one kernel keyring
/// key (the kernel offers no compare-and-swap): two processes updating the shared generation
/// table for different vaults would otherwise each write back a table without the other's entry.
///
/// The lock is an abstract Unix socket name bound for the length of the update: no file to
/// create, trust or leave behind, and the kernel releases it when its holder dies, however it
/// dies. Anyone on the machine can bind a name, so a holder that never lets go (another user
/// squatting it) only costs a bounded wait, after which the update goes ahead unserialized, as
/// it would without the lock; the writer that then loses its entry finds it missing and makes
/// it again (``VaultState/rememberGeneration()``).
enum KeyringUpdateLock {
    /// How long an update waits for the name before going ahead without it. Holders keep it
    /// for one keyring read and write, so only a stuck or hostile holder makes anyone wait this long.
    static let patience: Double = 1

    /// Runs `body` holding the user-wide lock named after `description`; `body` is told whether
    /// it holds it (false: the name stayed taken, and another process may update beside it).
    static func withLock<R>(_ description: String, _ body: (_ exclusive: Bool) -> R) -> R {
        let socket = acquire(description)
        defer { if socket >= 0 { SystemCall.close(socket) } }
        return body(socket >= 0)
    }

    /// A socket bound to the lock's name, or -1 when the name stayed taken for ``patience``
    /// seconds or no socket could be made.
    private static func acquire(_ description: String) -> Int32 {
        // The abstract namespace, where a name is not a file; a name too long is cut to fit.
        let name = Array("swift-keychain:\(getuid()):\(description)".utf8).prefix(UnixSocketAddress.capacity)
        guard let address = UnixSocketAddress(abstract: Array(name)), let fd = try? SystemCall.unixSocket(SOCK_DGRAM) else { return -1 }
        var waited: Double = 0
        var pause: UInt32 = 50
        while true {
            do throws(Errno) {
                try SystemCall.bind(fd, to: address)
                return fd
            } catch  where error.code == EADDRINUSE && waited < patience {
                // Taken: wait below and try again.
            } catch {
                SystemCall.close(fd)
                return -1
            }
            usleep(pause)
            waited += Double(pause) / 1_000_000
            pause = min(pause * 2, 5_000)
        }
    }
}
