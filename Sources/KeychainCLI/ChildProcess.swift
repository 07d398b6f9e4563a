import KeychainCore
internal import KeychainSystem

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
        var spawn = ProcessSpawn(arguments, environment: environment ?? ProcessEnvironment.current)
        spawn.searchPath = searchPath
        spawn.descriptors = [(0, .null(O_RDONLY)), (1, .null(O_WRONLY))]
        if let errorLog {
            spawn.descriptors.append((2, .copy(of: errorLog)))
        } else if quiet {
            spawn.descriptors.append((2, .null(O_WRONLY)))
        }
        spawn.newSession = newSession
        spawn.workingDirectory = workingDirectory
        // The command ignores SIGPIPE (a closed pipe is an exit status of its own); a program
        // it starts gets the default back, as it would from a shell.
        spawn.signalDefaults = .pipe
        return try? spawn.start()
    }

    /// Runs a program found on PATH and waits; its exit status, or nil when it did not start
    /// or was killed.
    static func run(_ arguments: [String]) -> Int32? {
        guard let pid = start(arguments, searchPath: true, quiet: false) else { return nil }
        guard let status = try? SystemCall.waitpid(pid) else { return nil }
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil
    }

    /// Runs a program found on PATH (standard error to /dev/null) and waits; what it wrote to
    /// standard output (at most 64 KiB), or nil when it did not start or did not exit 0.
    static func output(_ arguments: [String]) -> String? {
        guard let ends = try? SystemCall.pipe() else { return nil }
        var spawn = ProcessSpawn(arguments, environment: ProcessEnvironment.current)
        spawn.searchPath = true
        spawn.descriptors = [(0, .null(O_RDONLY)), (1, .copy(of: ends.write)), (2, .null(O_WRONLY))]
        spawn.signalDefaults = .pipe
        let pid = try? spawn.start()
        SystemCall.close(ends.write)
        defer { SystemCall.close(ends.read) }
        guard let pid else { return nil }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let count = buffer.withUnsafeMutableBytes { raw in (try? SystemCall.read(ends.read, into: raw)) ?? 0 }
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        guard let status = try? SystemCall.waitpid(pid), status == 0 else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
