internal import CSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What a process that holds keys does to keep them in: no core dump to leave them on disk,
/// no same-user process reading its memory.
package enum ProcessHygiene {
    /// Marks the process non-dumpable (no core dumps, no ptrace or /proc/PID/mem by other
    /// processes of the user) and sets its core-size limit to zero. The `keychain` command does
    /// this first thing; an application holding a vault open may call it too.
    /// - Returns: whether the kernel accepted both.
    @discardableResult
    package static func keepKeysInMemory() -> Bool {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        let limited = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) == 0
        return csystem_set_nondumpable() == 0 && limited
    }

    /// Whether the process may be dumped (or traced by the user's other processes).
    static var isDumpable: Bool { csystem_is_dumpable() != 0 }
}
