import Foundation
import KeychainCore
import KeychainSystem

/// Peers driven as processes, one per operation, and the Python libraries through a helper script.
enum Peers {
    static func which(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String], input: Data? = nil, environment: [String: String]? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("\(executable) \(arguments.first ?? "") exited \(process.terminationStatus)") }
        return output
    }

    /// Runs a process with `input` on standard input and its output discarded, through
    /// posix_spawn: Foundation's Process adds tens of milliseconds per launch, which would be
    /// charged to the program measured.
    static func spawn(_ executable: String, _ arguments: [String], input: Data = Data()) throws {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw BenchError("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[0], 0)
        posix_spawn_file_actions_addclose(&actions, pipe[1])
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(pipe[0])
        guard rc == 0 else { close(pipe[1]); throw BenchError("posix_spawn \(executable) failed: \(rc)") }
        input.withUnsafeBytes { bytes in _ = try? SystemCall.writeAll(pipe[1], bytes) }
        close(pipe[1])
        let status = (try? SystemCall.waitpid(pid)) ?? -1
        guard status == 0 else { throw BenchError("\(executable) \(arguments.first ?? "") exited with status \(status)") }
    }

    /// A set+get pair per iteration, each operation a new process.
    static func processPairs(name: String, runs: Int, pairs: Int, set: (Int, Int) throws -> Void, get: (Int) throws -> Void) throws -> Measurement {
        let rates = try Clock.rates(runs: runs, operations: pairs) { run in
            for index in 0..<pairs {
                try set(run, index)
                try get(index)
            }
        }
        return Measurement(name: name, group: "peers: set+get pairs", rates: rates)
    }

    static func secretService() -> String? {
        guard which("secret-tool") != nil else { return "secret-tool is not installed (apt-get install libsecret-tools)" }
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil else {
            return "no session bus (DBUS_SESSION_BUS_ADDRESS); start one with a Secret Service, e.g. eval \"$(scripts/secret-service.sh start)\""
        }
        return nil
    }

    /// Installs keyctl (Debian's `keyutils`) with apt-get, which only root may run; nil when it
    /// is installed, else why not.
    static func installKeyctl() -> String? {
        guard getuid() == 0 else { return "keyctl is not installed, and only root may apt-get install keyutils" }
        guard let aptGet = which("apt-get") else { return "keyctl is not installed, and there is no apt-get to install keyutils" }
        do {
            _ = try run(
                aptGet, ["install", "-y", "-qq", "--no-install-recommends", "keyutils"],
                environment: ["DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
        } catch {
            return "apt-get install keyutils failed: \(error)"
        }
        return which("keyctl") == nil ? "apt-get installed keyutils but keyctl is not on PATH" : nil
    }

    /// The Python libraries the peers are (`keyring`, its `keyrings.alt` backends and the
    /// `pycryptodome` their encrypted file needs, `secretstorage`).
    static let pythonPackages = ["keyring", "keyrings.alt", "pycryptodome", "secretstorage"]

    /// A private virtual environment with the Python peers, made (or reused) at `directory` with
    /// `python3 -m venv` and pip, which fetches them by name from PyPI; its interpreter.
    static func installPythonPeers(into directory: String) throws -> String {
        guard let python = which("python3") else { throw BenchError("--install-peers needs python3 (apt-get install python3 python3-venv)") }
        let interpreter = directory + "/bin/python3"
        if !FileManager.default.isExecutableFile(atPath: interpreter) {
            try run(python, ["-m", "venv", directory])
        }
        try run(interpreter, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + pythonPackages)
        return interpreter
    }

    /// The Python peers, through Benchmarks/python_peers.py, run by `interpreter` (else the
    /// `python3` on PATH); no results, with the reason, when Python is missing.
    static func python(script: String, pairs: Int, runs: Int, interpreter: String? = nil) -> (measurements: [Measurement], skipped: [String: String]) {
        guard let python = interpreter ?? which("python3") else { return ([], ["python peers": "python3 is not installed"]) }
        guard let output = try? run(python, [script, String(pairs), String(runs)]),
            let object = try? JSONSerialization.jsonObject(with: output) as? [String: Any]
        else {
            return ([], ["python peers": "the helper script failed"])
        }
        var measurements: [Measurement] = []
        for (name, value) in (object["results"] as? [String: [String: [Double]]]) ?? [:] {
            if let rates = value["pairs_per_second"] { measurements.append(Measurement(name: name, group: "peers: set+get pairs", rates: rates)) }
        }
        return (measurements.sorted { $0.name < $1.name }, (object["skipped"] as? [String: String]) ?? [:])
    }
}
