import Dispatch
import KeychainCore
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
    /// How often the daemon asks again whether the vault is enrolled and no agent runs.
    static let retrySeconds = 5
    /// How long stopping waits for a round under way (each etcd request is bounded).
    static let stopWaitSeconds = 10

    init(vault: Vault) { self.vault = vault }

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
                    let watching = UnlockWait(engine)
                    defer { watching.stop() }
                    engine.run(
                        until: { [self] in isStopping || leaving.withLock { $0 } },
                        onError: { error in
                            if error == .removed || error == .notEnrolled { leaving.withLock { $0 = true } }
                            if error == .removed {
                                removed.withLock { $0 = true }
                                Self.deviceRemoved.withLock { $0 = true }
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
        let line = Array("keychain serve: sync: \(error.description)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

/// Says on standard error, when it changes, what the daemon's sync holds for the vault's
/// unlock: received items it cannot seal (applied at the first round after the unlock) and
/// items of its own whose secrets it cannot open (sent whole after it). Read every two
/// seconds on a timer of its own: the engine's rounds hold what it reads.
private final class UnlockWait {
    private let timer: any DispatchSourceTimer

    private final class Seen: Sendable {
        let last = Mutex((received: 0, outbox: 0))
    }

    init(_ engine: SyncEngine) {
        let seen = Seen()
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "keychain.serve.sync.unlock"))
        timer.schedule(deadline: .now() + .seconds(2), repeating: .seconds(2))
        timer.setEventHandler {
            let now = engine.waitingForUnlock
            let changed = seen.last.withLock { (seen: inout (received: Int, outbox: Int)) -> Bool in
                defer { seen = now }
                return seen != now
            }
            guard changed, now.received > 0 || now.outbox > 0 else { return }
            let line = Array(
                ("keychain serve: sync: \(now.received) received changes and \(now.outbox) of this machine's wait for the vault to be unlocked "
                    + "(items whose secrets a locked vault cannot seal or open travel whole after the unlock)\n").utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        timer.resume()
    }

    func stop() { timer.cancel() }
}
