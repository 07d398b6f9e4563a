#if canImport(Glibc)
    import Glibc
#endif

/// The calls on processes: signalling one, waiting for a child to end, and this process's
/// own signal dispositions.
extension SystemCall {
    /// `kill(2)`: sends `signal` to `pid` (a negative `pid`: to that process group).
    package static func kill(_ pid: pid_t, _ signal: Int32) throws(Errno) {
        _ = try valueOrErrno("kill", path: nil) { Glibc.kill(pid, signal) }
    }

    /// `waitpid(2)` with `WNOHANG`: the child's wait status once it has ended (it is reaped),
    /// nil while it runs.
    package static func waitpidIfEnded(_ pid: pid_t) throws(Errno) -> Int32? {
        var status: Int32 = 0
        let ended = try valueOrErrno("waitpid", path: nil) { Glibc.waitpid(pid, &status, WNOHANG) }
        return ended == pid ? status : nil
    }

    /// `waitid(2)` with `WEXITED | WNOHANG | WNOWAIT`: whether the child has ended, without
    /// reaping it (its id still names it, and its process group, until it is waited for).
    package static func hasEnded(_ pid: pid_t) throws(Errno) -> Bool {
        var info = siginfo_t()
        _ = try valueOrErrno("waitid", path: nil) { waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) }
        return info._sifields._sigchld.si_pid == pid
    }

    /// `signal(2)` with `SIG_IGN`: this process ignores `signal` from now on.
    package static func ignoreSignal(_ signal: Int32) {
        _ = Glibc.signal(signal, SIG_IGN)
    }
}
