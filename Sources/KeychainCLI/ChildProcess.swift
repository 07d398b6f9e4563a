import CSystem
import FoundationEssentials
import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// Another program started by the command (the sync agent, systemctl), with standard input
/// and output on /dev/null so that it holds none of the command's pipes open.
enum ChildProcess {
    /// Starts `arguments[0]` (a path, or with `searchPath` a name found on PATH); standard
    /// error is the command's unless `quiet` (then /dev/null) or `errorLog` (a descriptor open
    /// for writing), `newSession` puts it in a session of its own (a terminal's hangup or
    /// Ctrl-C does not reach it), and `workingDirectory` is where it runs (else the
    /// command's). Its process id, or nil.
    static func start(
        _ arguments: [String], environment: [String: String]? = nil, searchPath: Bool = false, quiet: Bool, errorLog: Int32? = nil,
        newSession: Bool = false, workingDirectory: String? = nil
    ) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let workingDirectory, csystem_spawn_file_actions_addchdir(&actions, workingDirectory) != 0 { return nil }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let errorLog {
            posix_spawn_file_actions_adddup2(&actions, errorLog, 2)
        } else if quiet {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The command ignores SIGPIPE (a closed pipe is an exit status of its own); a program
        // it starts gets the default back, as it would from a shell.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // 0x80: glibc's POSIX_SPAWN_SETSID, which its headers show only under _GNU_SOURCE.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF) | (newSession ? 0x80 : 0))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessEnvironment.current).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let started =
            searchPath
            ? posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
            : posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        return started == 0 ? pid : nil
    }

    /// Runs a program found on PATH and waits; its exit status, or nil when it did not start
    /// or was killed.
    static func run(_ arguments: [String]) -> Int32? {
        guard let pid = start(arguments, searchPath: true, quiet: false) else { return nil }
        guard let status = try? SystemCall.waitpid(pid) else { return nil }
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil
    }
}
