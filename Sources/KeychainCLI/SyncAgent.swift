import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Sync that keeps itself running, as gpg keeps gpg-agent: receiving is the job of one agent
/// per vault (`keychain sync run`, holding the vault's ``SyncAgentLock``), which a systemd
/// user service keeps running where systemd runs the user's session, and which any command
/// that touches an enrolled vault starts otherwise; started that way, it exits when idle.
/// A command that wrote a synchronizable item sends it itself before it exits, within a
/// short bound.
enum SyncAgent {
    /// How long a command waits for the cluster to take what it wrote.
    static let sendBoundMilliseconds = 1_500
    /// How long an agent started on demand runs without sending or receiving anything.
    static let defaultIdleSeconds = 900

    /// Whether commands start the agent on demand: `KEYCHAIN_SYNC_AGENT=off` leaves sync to
    /// `keychain sync run` (a service of the user's own, or tests that sync step by step).
    static func startsOnDemand(_ environment: [String: String]) -> Bool { environment["KEYCHAIN_SYNC_AGENT"] != "off" }

    /// The idle time of an agent started on demand: `KEYCHAIN_SYNC_AGENT_IDLE` seconds, or 15 minutes.
    static func idleSeconds(_ environment: [String: String]) -> Int {
        environment["KEYCHAIN_SYNC_AGENT_IDLE"].flatMap { Int($0) }.map { min(max($0, 1), 86_400) } ?? defaultIdleSeconds
    }

    /// What follows every command that opened the vault: sends what it wrote for sync, starts
    /// the agent if none runs, and, for `get` and `status`, says when changes wait unsent with
    /// no agent to send them. Never fails the command: sync is best effort here, and the
    /// outbox keeps every change until it is sent.
    static func afterCommand(_ context: Context, command: String) {
        guard let vault = context.openedVault, vault.isEnrolledInSync else { return }
        if vault.journaledSyncChange, let engine = try? SyncEngine(vault: vault) {
            _ = engine.sendNow(within: sendBoundMilliseconds)
        }
        SyncAlarmNotice.write(vault, context, command: command)
        let running = SyncAgentLock.holder(for: vault.location) != nil
        var started = false
        if !running, startsOnDemand(context.environment) { started = start(vault.location, environment: context.environment, by: command) }
        guard !running, command == "get" || command == "status" else { return }
        let waiting = (try? SyncEngine(vault: vault).outboxLength()) ?? 0
        guard waiting > 0 else { return }
        let changes = waiting == 1 ? "1 change waits" : "\(waiting) changes wait"
        context.terminal.writeError(
            started
                ? "keychain: \(changes) to be sent; no sync agent was running for this vault, one is started now\n"
                : "keychain: \(changes) to be sent and no sync agent runs for this vault: 'keychain sync run' sends them (KEYCHAIN_SYNC_AGENT=off keeps commands from starting one)\n"
        )
    }

    /// Starts `keychain sync run --idle` for the vault at `location`, detached (a session of
    /// its own, in `/`, with only the variables it needs: ``agentEnvironment(_:)``, standard
    /// error appended to its log: ``logPath(_:)``), and waits until an agent holds the vault's
    /// lock (a moment), so the next command finds it. `command` names, in the log, the
    /// command that started it. Whether one holds it; if another command started one at the
    /// same moment, one of the two takes the lock and the other exits.
    @discardableResult
    static func start(_ location: VaultLocation, environment: [String: String], by command: String = "sync") -> Bool {
        guard let executable = selfExecutable() else { return false }
        let idle = idleSeconds(environment)
        let arguments = [executable, "sync", "run", "--idle", String(idle), "--vault", location.path]
        let log = openLog(location)
        defer { if let log { SystemCall.close(log) } }
        guard
            let pid = ChildProcess.start(
                arguments, environment: agentEnvironment(environment), quiet: true, errorLog: log, newSession: true, workingDirectory: "/")
        else { return false }
        if let log {
            let line = "\(utcNow()) keychain sync: agent started (process \(pid)) by keychain \(command); it exits after \(idle) idle seconds\n"
            try? SystemCall.writeAll(log, line, path: logPath(location))
        }
        // Until it (or another) holds the lock, or it exited (a removed device's agent does at once).
        for _ in 0..<250 {
            if SyncAgentLock.holder(for: location) != nil { return true }
            if (try? SystemCall.waitpidIfEnded(pid)) != nil { return false }
            usleep(20_000)
        }
        return false
    }

    /// The variables an agent started on demand takes from the command that starts it, and
    /// nothing else of the command's environment (another program's token, a shell's
    /// settings): where a passphrase is (`KEYCHAIN_PASSPHRASE_FILE`, `CREDENTIALS_DIRECTORY`),
    /// how the vault's keys are shared (`KEYCHAIN_KERNEL_KEYRING`, `KEYCHAIN_UNLOCK_TIMEOUT`),
    /// `HOME`, and what libcurl and OpenSSL read to reach the cluster (`SSL_CERT_FILE`,
    /// `SSL_CERT_DIR`, `OPENSSL_CONF` and the proxy variables). The README lists them.
    static let agentVariables: Set<String> = [
        "HOME", "KEYCHAIN_PASSPHRASE_FILE", "CREDENTIALS_DIRECTORY", "KEYCHAIN_KERNEL_KEYRING", "KEYCHAIN_UNLOCK_TIMEOUT",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "OPENSSL_CONF", "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy",
        "NO_PROXY",
    ]

    /// The environment of an agent started on demand: ``agentVariables`` from `environment`,
    /// a relative passphrase file named whole (the agent runs in `/`), and no agent of its own.
    static func agentEnvironment(_ environment: [String: String]) -> [String: String] {
        var kept = environment.filter { agentVariables.contains($0.key) && !$0.value.isEmpty }
        if let file = kept["KEYCHAIN_PASSPHRASE_FILE"], !file.hasPrefix("/") { kept["KEYCHAIN_PASSPHRASE_FILE"] = VaultLocation(path: file).path }
        if let directory = kept["CREDENTIALS_DIRECTORY"], !directory.hasPrefix("/") { kept["CREDENTIALS_DIRECTORY"] = nil }
        kept["KEYCHAIN_SYNC_AGENT"] = "off"
        return kept
    }

    /// Where an agent started on demand writes its messages: beside the vault, as its lock is.
    static func logPath(_ location: VaultLocation) -> String { location.path + ".sync-agent.log" }

    /// A log that grew past this is kept as `.old` and started afresh when the next agent starts.
    static let logLimit = 1 << 20

    /// The agent's log, open for appending (created 0600); nil when it cannot be opened, or
    /// is not a regular file of this user's (the agent's messages then go nowhere).
    static func openLog(_ location: VaultLocation) -> Int32? {
        let path = logPath(location)
        if let info = try? SystemCall.lstat(path), (info.st_mode & S_IFMT) == S_IFREG, info.st_size > logLimit { try? SystemCall.rename(path, path + ".old") }
        guard let fd = try? SystemCall.open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, mode: 0o600) else { return nil }
        guard let info = try? SystemCall.fstat(fd, path: path), (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            SystemCall.close(fd)
            return nil
        }
        return fd
    }

    /// Where the vault's agent says what went wrong, for `sync status`: the systemd user
    /// service's journal when one is installed, else the log of the agents commands start.
    static func messages(_ location: VaultLocation, environment: [String: String]) -> String {
        if let executable = selfExecutable(), let unit = SystemdUserUnit(vault: location, executable: executable, environment: environment),
            SystemCall.accessible(unit.directory + "/" + unit.name, F_OK)
        {
            return "journalctl --user -u \(unit.name)"
        }
        return logPath(location)
    }

    /// Now, in UTC, as `2026-01-31T12:00:00Z`.
    private static func utcNow() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This program's own executable, so the agent is the same version as the command.
    static func selfExecutable() -> String? {
        FileSystem.ownExecutable
    }
}
