import Dispatch
import KeychainCore
internal import KeychainSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Sync while the daemon serves: the synchronized collection's items must arrive while it
/// runs, not at its next start, and a daemon runs for the whole session.
///
/// Receiving is the job of one sync agent per vault, the process that holds the vault's
/// ``SyncAgentLock`` (`keychain sync run`, as a systemd user service or started by a
/// command). The daemon is that agent whenever none runs: on a thread of its own it takes the
/// lock and runs the sync engine's loop (a watch on the group, the outbox sent as soon as a
/// write journals a change), and while another process holds the lock it leaves the work to
/// it and asks again every few seconds, so an agent that exits when idle hands over to the
/// daemon. A vault that joins a sync group while the daemon runs is found the same way.
final class ServedSync: Sendable {
    private let vault: Vault
    private let stopping = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    /// Whether the sync engine of this process found the device removed from its sync group:
    /// the synchronized collection then takes no new item, which could never leave (one daemon
    /// serves one vault per process).
    static let deviceRemoved = Mutex(false)
    static var isDeviceRemoved: Bool { deviceRemoved.withLock { $0 } }
    /// When this machine found itself removed from its sync group, in seconds since 1970 (as
    /// the sync state's alarm has it, else when this process's engine met the removal); 0
    /// while it is a member. The synchronized collection's `RemovedFromGroup`.
    static let removedAt = Mutex<UInt64>(0)
    /// How often the daemon asks again whether the vault is enrolled and no agent runs.
    static let retrySeconds = 5
    /// How long stopping waits for a round under way (each etcd request is bounded).
    static let stopWaitSeconds = 10

    /// What pulls applied to the synchronized collection's items, for the daemon to announce
    /// (``takeArrivals()``), and the pipe that wakes the bus thread for it.
    private let arrivals = Mutex<[SyncArrival]>([])
    private let pipeEnds: (read: Int32, write: Int32)

    init(vault: Vault) {
        self.vault = vault
        pipeEnds = (try? SystemCall.pipe(nonBlocking: true)) ?? (-1, -1)
    }

    deinit {
        if pipeEnds.read >= 0 { SystemCall.close(pipeEnds.read) }
        if pipeEnds.write >= 0 { SystemCall.close(pipeEnds.write) }
    }

    /// Readable when items arrived: the bus thread then takes them (``takeArrivals()``).
    var arrivalDescriptor: Int32 { pipeEnds.read }

    /// What arrived since the last call, each once.
    func takeArrivals() -> [SyncArrival] {
        var drain = [UInt8](repeating: 0, count: 64)
        while drain.withUnsafeMutableBytes({ (try? SystemCall.read(pipeEnds.read, into: $0)) ?? 0 }) > 0 {}
        return arrivals.withLock { (pending: inout [SyncArrival]) -> [SyncArrival] in
            defer { pending = [] }
            return pending
        }
    }

    fileprivate func noteArrivals(_ more: [SyncArrival]) {
        guard !more.isEmpty else { return }
        arrivals.withLock { $0 += more }
        _ = [UInt8(1)].withUnsafeBytes { try? SystemCall.write(pipeEnds.write, $0) }
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    /// Starts the thread; it runs until ``stop()``.
    func start() {
        DispatchQueue(label: "keychain.serve.sync").async { [self] in
            defer { ended.signal() }
            // A device removed from its group stays enrolled until `keychain sync leave`: its
            // engine is not started again and again.
            let removed = Mutex(false)
            while !isStopping, !removed.withLock({ $0 }) {
                if vault.isEnrolledInSync, let lock = try? SyncAgentLock.acquire(for: vault.location), let engine = try? SyncEngine(vault: vault) {
                    let reported = Mutex(false)
                    let leaving = Mutex(false)
                    let watching = EngineWatch(engine, sync: self)
                    defer { watching.stop() }
                    engine.run(
                        until: { [self] in isStopping || leaving.withLock { $0 } },
                        onError: { error in
                            if error == .removed || error == .notEnrolled { leaving.withLock { $0 = true } }
                            if error == .removed {
                                removed.withLock { $0 = true }
                                Self.deviceRemoved.withLock { $0 = true }
                                let alarm = (try? engine.membershipAlarm()) ?? nil
                                let seconds = alarm.flatMap { $0.kind == .removed ? $0.at / 1_000 : nil } ?? UInt64(max(0, time(nil)))
                                Self.removedAt.withLock { $0 = seconds }
                            }
                            // The first failure only: a cluster down for an hour is one line (`sync status` has more).
                            let first = reported.withLock { (seen: inout Bool) -> Bool in
                                defer { seen = true }
                                return !seen
                            }
                            if first { Self.report(error) }
                        })
                    withExtendedLifetime(lock) {}
                }
                _ = wake.wait(timeout: .now() + .seconds(Self.retrySeconds))
            }
        }
    }

    /// Stops the engine and waits for its round under way (bounded): a round still sealing or
    /// opening records while the process exits would race the teardown of what it uses.
    func stop() {
        stopping.withLock { $0 = true }
        wake.signal()
        _ = ended.wait(timeout: .now() + .seconds(Self.stopWaitSeconds))
    }

    /// One line on standard error (the journal, under systemd); a sync error names no item.
    private static func report(_ error: SyncError) {
        try? SystemCall.writeAll(STDERR_FILENO, "keychain serve: sync: \(error.description)\n")
    }
}

/// Follows the engine from a timer of its own (its rounds hold what it reads): every quarter
/// second, what pulls applied to items goes to the daemon (``ServedSync/takeArrivals()``), for
/// its signals; and when it changes, standard error says what waits for the vault's unlock:
/// received items it cannot seal (applied at the first round after the unlock) and items of
/// its own whose secrets it cannot open (sent whole after it).
private final class EngineWatch {
    private let timer: any DispatchSourceTimer

    private final class Seen: Sendable {
        let last = Mutex((received: 0, outbox: 0, ticks: 0))
    }

    init(_ engine: SyncEngine, sync: ServedSync) {
        let seen = Seen()
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "keychain.serve.sync.watch"))
        timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250))
        timer.setEventHandler { [weak sync] in
            sync?.noteArrivals(engine.takeArrivals())
            let due = seen.last.withLock { (last: inout (received: Int, outbox: Int, ticks: Int)) -> Bool in
                last.ticks += 1
                return last.ticks % 8 == 0
            }
            guard due else { return }
            let now = engine.waitingForUnlock
            let changed = seen.last.withLock { (last: inout (received: Int, outbox: Int, ticks: Int)) -> Bool in
                defer { (last.received, last.outbox) = now }
                return last.received != now.received || last.outbox != now.outbox
            }
            guard changed, now.received > 0 || now.outbox > 0 else { return }
            try? SystemCall.writeAll(
                STDERR_FILENO,
                "keychain serve: sync: \(now.received) received changes and \(now.outbox) of this machine's wait for the vault to be unlocked "
                    + "(items whose secrets a locked vault cannot seal or open travel whole after the unlock)\n")
        }
        timer.resume()
    }

    func stop() { timer.cancel() }
}
