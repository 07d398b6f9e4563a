#if canImport(Glibc)
    import Glibc
#endif

/// The calls on sockets, and on descriptors waited for together.
extension SystemCall {
    /// `socketpair(2)` of two connected Unix stream sockets, close-on-exec (and non-blocking
    /// with `nonBlocking`): no child started meanwhile inherits them.
    package static func socketPair(nonBlocking: Bool = false) throws(Errno) -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | (nonBlocking ? SOCK_NONBLOCK.rawValue : 0))
        _ = try valueOrErrno("socketpair", path: nil) { Glibc.socketpair(AF_UNIX, type, 0, &pair) }
        return (pair[0], pair[1])
    }

    /// `send(2)` with `MSG_NOSIGNAL`: a peer that went away is `EPIPE`, never a SIGPIPE.
    /// How many bytes were sent (possibly fewer than given).
    package static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno("send", path: nil) { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// `recv(2)` into `buffer`: how many bytes came, 0 once the peer closed its end.
    package static func recv(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno("recv", path: nil) { Glibc.recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// `poll(2)` over `descriptors` for at most `milliseconds` (negative: no limit): how many
    /// have events. A signal does not shorten or lengthen the wait: the call is made again for
    /// what is left of it.
    package static func poll(_ descriptors: inout [pollfd], milliseconds: Int32) throws(Errno) -> Int {
        let deadline = milliseconds < 0 ? nil : ContinuousClock.now + .milliseconds(milliseconds)
        let ready = try descriptors.withUnsafeMutableBufferPointer { buffer in
            Result { () throws(Errno) in
                try valueOrErrno("poll", path: nil) { Glibc.poll(buffer.baseAddress, nfds_t(buffer.count), remaining(until: deadline)) }
            }
        }.get()
        return Int(ready)
    }

    /// The milliseconds left until `deadline`, rounded up (-1: none).
    private static func remaining(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
