internal import CSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A program to start with `posix_spawn(3)`: its arguments and environment, what its standard
/// descriptors are, and how it stands apart from its parent (a session of its own, a working
/// directory, the signals it gets back at their defaults). The one place the package starts
/// programs, so that every child is started the same careful way.
package struct ProcessSpawn {
    /// What one of the child's descriptors is.
    package enum Descriptor {
        /// `/dev/null`, open for reading (`O_RDONLY`) or for writing (`O_WRONLY`).
        case null(Int32)
        /// A copy of one of this process's descriptors.
        case copy(of: Int32)
    }

    /// Which signals the child gets back at their default action.
    package enum SignalDefaults {
        /// SIGPIPE only (the command ignores it; a program it starts expects it, as from a shell).
        case pipe
        /// Every signal, with none blocked either: nothing the parent set up reaches the child.
        case all
    }

    /// The program (`arguments[0]`: a path, or with ``searchPath`` a name found on PATH) and its arguments.
    package var arguments: [String]
    package var environment: [String: String]
    package var searchPath = false
    /// The child's descriptors that differ from this process's, by number.
    package var descriptors: [(Int32, Descriptor)] = []
    /// A session (and process group) of its own: a terminal's hangup or Ctrl-C does not reach it.
    package var newSession = false
    package var workingDirectory: String?
    package var signalDefaults = SignalDefaults.pipe

    package init(_ arguments: [String], environment: [String: String]) {
        precondition(!arguments.isEmpty, "a program to start has at least its name")
        self.arguments = arguments
        self.environment = environment
    }

    /// Starts the program: its process id.
    /// - Throws: ``Errno`` (call `posix_spawn`, path the program) when it cannot be started.
    package func start() throws(Errno) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let workingDirectory {
            let failed = csystem_spawn_file_actions_addchdir(&actions, workingDirectory)
            if failed != 0 { throw Errno(failed, call: "posix_spawn", path: workingDirectory) }
        }
        for (fd, descriptor) in descriptors {
            switch descriptor {
            case .null(let flags): posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", flags, 0)
            case .copy(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        var flags = Int32(POSIX_SPAWN_SETSIGDEF)
        switch signalDefaults {
        case .pipe:
            sigemptyset(&defaults)
            sigaddset(&defaults, SIGPIPE)
        case .all:
            sigfillset(&defaults)
            var noneBlocked = sigset_t()
            sigemptyset(&noneBlocked)
            posix_spawnattr_setsigmask(&attributes, &noneBlocked)
            flags |= Int32(POSIX_SPAWN_SETSIGMASK)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // 0x80: glibc's POSIX_SPAWN_SETSID (2.26), which its headers show only under _GNU_SOURCE.
        if newSession { flags |= 0x80 }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: Int32 = 0
        let failed =
            searchPath
            ? posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
            : posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard failed == 0 else { throw Errno(failed, call: "posix_spawn", path: arguments[0]) }
        return pid
    }
}
