import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a program did to a directory tree: the tree before it ran (every file's bytes) and
/// each state-changing call it made there, in order, read from `strace` (Debian's) run on the
/// real program. The program is the one users run, unmodified; strace sees every system call,
/// including those SQLite makes itself, which a VFS or the project's own helpers would each
/// see only half of.
struct FileTrace {
    /// Names in the tree before the program ran (relative paths) and the file each names.
    var initialNames: [String: Int] = [:]
    var initialDirectories: Set<String> = [""]
    var initialContents: [Int: [UInt8]] = [:]
    var operations: [FileOperation] = []
    /// The first name each file had (to tell SQLite's -shm files, whose bytes do not matter).
    var firstNames: [Int: String] = [:]
    /// How many of the calls were made when the program acknowledged the operation, where
    /// that comes before it exits (a daemon's reply to its client); nil: when it exits.
    var acknowledgedAt: Int?
    /// How many of the calls a daemon had made when it was ready to serve, before its client
    /// asked anything (what it commits on its own at start); nil for other programs.
    var readyAt: Int?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    /// Runs `program arguments` under strace with `environment`, `input` on standard input and
    /// `root` as its working directory, and reads what it did inside `root`. With `client`, the
    /// program is a daemon: `ready` waits until it serves (the calls traced by then are
    /// ``readyAt``), `client` is run then, its return is the acknowledgement (the calls traced
    /// by then are ``acknowledgedAt``), and the daemon is then stopped by a SIGTERM.
    /// - Returns: the trace and the program's exit status.
    /// - Throws: ``Failure`` when strace's output holds a call the explorer does not model, or
    ///   what `client` throws.
    static func record(
        program: String, _ arguments: [String], environment: [String: String], input: [UInt8], root: String, scratch: String,
        ready: () throws -> Void = {}, client: (() throws -> Void)? = nil
    ) throws -> (trace: FileTrace, status: Int32, stderr: String) {
        var trace = try snapshot(root)
        let log = scratch + "/strace.log"
        try? FileManager.default.removeItem(atPath: log)
        let calls =
            "openat,open,creat,write,pwrite64,lseek,ftruncate,truncate,fsync,fdatasync,rename,renameat,renameat2,link,linkat,"
            + "unlink,unlinkat,mkdir,mkdirat,rmdir,close,writev,pwritev,pwritev2,dup,dup2,dup3,fcntl,sync_file_range,syncfs,sync"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        process.arguments = ["-f", "-qq", "-y", "-xx", "-s", "16777216", "-e", "trace=" + calls, "-o", log, "--", program] + arguments
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        let stdin = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        var readyLog: String?
        var acknowledgedLog: String?
        if let client {
            // strace writes each call's line as the call returns, before the daemon replies.
            let complete = {
                let seen = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                return String(seen[..<(seen.lastIndex(of: "\n").map { seen.index(after: $0) } ?? seen.startIndex)])
            }
            defer { stopTracee(of: process.processIdentifier) }
            try ready()
            readyLog = complete()
            try client()
            acknowledgedLog = complete()
        }
        let errorText = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let callsIn = { (text: String) throws -> Int in
            var parser = StraceParser(root: root, cwd: root, trace: trace)
            try parser.read(text)
            return parser.trace.operations.count
        }
        if let readyLog { trace.readyAt = try callsIn(readyLog) }
        if let acknowledgedLog { trace.acknowledgedAt = try callsIn(acknowledgedLog) }
        let text = try String(contentsOfFile: log, encoding: .utf8)
        var parser = StraceParser(root: root, cwd: root, trace: trace)
        try parser.read(text)
        trace = parser.trace
        return (trace, process.terminationStatus, errorText)
    }

    /// Sends SIGTERM to the program strace (`tracer`) runs: strace itself, told to stop, would
    /// let it go on untraced.
    private static func stopTracee(of tracer: pid_t) {
        for _ in 0..<400 {
            let children = (try? String(contentsOfFile: "/proc/\(tracer)/task/\(tracer)/children", encoding: .utf8)) ?? ""
            if let child = children.split(separator: " ").first.flatMap({ pid_t($0) }) {
                kill(child, SIGTERM)
                return
            }
            usleep(25_000)
        }
    }

    /// The tree at `root` as it is now: every directory, and every regular file's bytes.
    static func snapshot(_ root: String) throws -> FileTrace {
        var trace = FileTrace()
        var inodes: [UInt64: Int] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            var info = stat()
            guard lstat(root + "/" + relative, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: trace.initialDirectories.insert(relative)
            case S_IFREG:
                let inode: Int
                if let known = inodes[UInt64(info.st_ino)] {
                    inode = known
                } else {
                    inode = inodes.count + 1
                    inodes[UInt64(info.st_ino)] = inode
                    trace.initialContents[inode] = Array(FileManager.default.contents(atPath: root + "/" + relative) ?? Data())
                    trace.firstNames[inode] = relative
                }
                trace.initialNames[relative] = inode
            default: continue
            }
        }
        return trace
    }
}

extension FileTrace {
    /// `path` without `.`, `..` or repeated slashes.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }
}
