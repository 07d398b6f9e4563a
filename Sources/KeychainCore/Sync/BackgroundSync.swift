import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The sync engines this process runs in the background (``VaultConfiguration/syncsInBackground``),
/// stopped and waited for when the process exits: a round still sealing or opening records
/// while `exit` tears down the libraries and globals it uses would race that teardown.
enum BackgroundSync {
    private struct Engines {
        var running = 0
        var stopping = false
        var stopsAtExit = false
    }

    private static let engines = Mutex(Engines())

    /// How long an exit waits for the engines to end their rounds, in 10 ms steps: a round
    /// waits on etcd at most a request's timeout (``EtcdClient``), so a cluster that hangs
    /// delays the exit by no more than this.
    private static let exitWaitSteps = 500

    /// Syncs `vault` for as long as the process runs, on a thread of its own, if it is
    /// enrolled: the vault's background consumer of its journal (``VaultConfiguration/syncsInBackground``).
    /// Failures are retried quietly; `keychain sync status` shows the outbox.
    static func start(_ vault: Vault) {
        guard let engine = try? SyncEngine(vault: vault) else { return }
        start(engine)
    }

    /// Runs `engine` on a thread of its own until the process exits.
    private static func start(_ engine: SyncEngine) {
        let registersExit = engines.withLock { (engines: inout Engines) -> Bool? in
            guard !engines.stopping else { return nil }
            engines.running += 1
            defer { engines.stopsAtExit = true }
            return !engines.stopsAtExit
        }
        guard let registersExit else { return }
        if registersExit { atexit { BackgroundSync.stopAll() } }
        DispatchQueue(label: "keychain.sync").async {
            engine.run(until: { BackgroundSync.engines.withLock { $0.stopping } })
            BackgroundSync.engines.withLock { $0.running -= 1 }
        }
    }

    /// Asks every engine to stop and waits for each to end its round (bounded).
    private static func stopAll() {
        engines.withLock { $0.stopping = true }
        for _ in 0..<exitWaitSteps where engines.withLock({ $0.running }) > 0 {
            usleep(10_000)
        }
    }
}
