import FoundationEssentials
import KeychainCore

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
        if !running, startsOnDemand(context.environment) { started = start(vault.location, environment: context.environment) }
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
    /// its own, standard streams on /dev/null), and waits until an agent holds the vault's
    /// lock (a moment), so the next command finds it. Whether one holds it; if another command
    /// started one at the same moment, one of the two takes the lock and the other exits.
    @discardableResult
    static func start(_ location: VaultLocation, environment: [String: String]) -> Bool {
        guard let executable = selfExecutable() else { return false }
        let arguments = [executable, "sync", "run", "--idle", String(idleSeconds(environment)), "--vault", location.path]
        guard let pid = ChildProcess.start(arguments, environment: environment, quiet: true, newSession: true) else { return false }
        // Until it (or another) holds the lock, or it exited (a removed device's agent does at once).
        for _ in 0..<250 {
            if SyncAgentLock.holder(for: location) != nil { return true }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return false }
            usleep(20_000)
        }
        return false
    }

    /// This program's own executable, so the agent is the same version as the command.
    static func selfExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
