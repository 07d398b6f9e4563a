import FoundationEssentials
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A read of a synchronizable item that finds nothing, on an enrolled vault whose agent is not
/// running or has only just started, waits a short bound for the agent's first round before it
/// says "not found": the item may be on its way. The agent applies what it pulls (it writes);
/// the read only reads again.
enum SyncFirstRound {
    /// How long a read waits for the first round of an agent started a moment ago.
    static let boundMilliseconds = 3_000

    /// Waits for the first round of the vault's agent (started now when none runs and commands
    /// start it): true when a round finished since the agent started, so the read should look
    /// again; false when there was nothing to wait for, or the bound passed (said on standard
    /// error: the item may still arrive).
    static func awaited(_ context: Context, command: String) -> Bool {
        guard let vault = context.openedVault, vault.isEnrolledInSync, let engine = try? SyncEngine(vault: vault),
            let before = try? engine.lastPullMilliseconds()
        else { return false }
        let location = vault.location
        let startedAt: UInt64
        if let pid = SyncAgentLock.holder(for: location) {
            // Running: only one that has not finished a round since it started is waited for.
            guard let started = startMilliseconds(of: pid), before < started else { return false }
            startedAt = started
        } else {
            guard SyncAgent.startsOnDemand(context.environment) else { return false }
            startedAt = nowMilliseconds()
            guard SyncAgent.start(location, environment: context.environment, by: command) else { return false }
        }
        let deadline = nowMilliseconds() + UInt64(boundMilliseconds)
        while nowMilliseconds() < deadline {
            if let pulled = try? engine.lastPullMilliseconds(), pulled >= startedAt { return true }
            usleep(50_000)
        }
        context.terminal.writeError(
            "keychain \(command): the sync agent of this vault, started a moment ago, has not finished its first round within \(boundMilliseconds / 1_000) s; the item may still arrive from the group (keychain sync status says how far this device is; its agent's messages are in \(SyncAgent.messages(location, environment: context.environment)))\n"
        )
        return false
    }

    /// When process `pid` started, in milliseconds since 1970 (from /proc: its start in clock
    /// ticks since boot, and the boot time); nil when it cannot be read.
    static func startMilliseconds(of pid: pid_t) -> UInt64? {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces), from field 3: starttime is 22.
        // The boot time is in whole seconds, so this may be up to a second early: a round
        // finished in that second before the agent started counts as its own.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = UInt64(fields[19]) else { return nil }
        guard let system = read("/proc/stat"), let line = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let boot = UInt64(line.dropFirst(6).trimmingPrefix(while: { $0 == " " }))
        else { return nil }
        let hertz = UInt64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return boot * 1_000 + ticks * 1_000 / hertz
    }

    /// Milliseconds since 1970 by the wall clock, as the vault records its pulls.
    private static func nowMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
    }

    /// A file of /proc, whole (nil when it cannot be read, or holds more than a MiB).
    private static func read(_ path: String) -> String? {
        try? FileSystem.readText(path, limit: 1 << 20)
    }
}
