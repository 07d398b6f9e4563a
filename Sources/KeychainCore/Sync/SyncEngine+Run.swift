import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Rounds: one on demand, or a loop that keeps the vault in step while the process runs.
extension SyncEngine {
    // MARK: - Rounds

    /// Sends the outbox and applies what the other devices wrote since the last round.
    ///
    /// - Throws: ``SyncError/unreachable(_:)`` when no endpoint answers (nothing is lost: the
    ///   outbox stays), ``SyncError/removed`` when this device was removed from the group,
    ///   ``SyncError/forked`` when it met another history of the group (it sends nothing then).
    ///   A round that refused values or a member list returns them in its ``SyncRound``.
    @discardableResult
    public func syncOnce() throws(SyncError) -> SyncRound {
        try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) -> SyncRound in
            var state = try state()
            let client = try EtcdClient(state.cluster)
            var round = SyncRound()
            let alarmBefore = state.alarm
            try refreshMembership(&state, client: client)
            if let alarm = state.alarm, alarm != alarmBefore { round.membershipAlarm = alarm.kind }
            round.sent = try push(&state, &revisions, client: client)
            let pulled = try pull(&state, &revisions, client: client)
            try deleteRetiredRecords(&state, client: client)
            try resendDropped(state, client: client)
            round.received = pulled.applied
            round.superseded = pulled.superseded
            round.refused = pulled.refused
            if round.sent + round.received > 0 { noteExchange() }
            return round
        }
    }

    /// Syncs until `shouldStop` returns true: a full round now and every 5 s; between them,
    /// what the watch reports is applied as it arrives, and what this process writes is sent
    /// at once (what other processes write, within 100 ms). Errors are reported to `onError`
    /// and retried after a pause, and so are rounds that refused values or a member list;
    /// ``SyncError/removed`` ends it.
    public func run(until shouldStop: @escaping @Sendable () -> Bool, onError: @escaping @Sendable (SyncError) -> Void = { _ in }) {
        let inbox = Inbox()
        // A write in this process wakes the loop at once.
        let observation = vault.observeJournal { inbox.post(local: true) }
        defer { vault.stopObservingJournal(observation) }
        // The watch thread reads the vault only while this loop runs: the loop waits for a read
        // under way before it returns, and the thread ends at its next.
        let watchReads = WatchGate()
        defer { watchReads.close() }
        DispatchQueue(label: "keychain.sync.watch").async { [self] in
            while !shouldStop() {
                guard let read = watchReads.read({ try? state() }) else { break }
                guard let state = read, let client = try? EtcdClient(state.cluster) else {
                    sleepMilliseconds(500)
                    continue
                }
                do {
                    try client.watch(prefix: state.prefix, startRevision: EtcdRevision.after(state.cursor), idleSeconds: 5) { event in
                        switch event {
                        case .changed(let revision, let puts): inbox.post(puts: puts, revision: revision)
                        case .compacted: inbox.post(fullRound: true)
                        case .caughtUp: break
                        }
                        return !shouldStop()
                    }
                } catch {
                    sleepMilliseconds(200)
                }
            }
            inbox.post(fullRound: true)
        }
        var failures = 0
        var fullRound = true
        while !shouldStop() {
            var sentSome = false
            do throws(SyncError) {
                if fullRound {
                    let round = try syncOnce()
                    sentSome = round.sent > 0
                    Self.report(round, to: onError)
                } else {
                    let work = inbox.take()
                    if !work.puts.isEmpty { try applyWatched(work.puts, revision: work.revision) }
                    if work.local || work.puts.isEmpty { sentSome = try pushOnly() > 0 }
                }
                failures = 0
            } catch .removed {
                onError(.removed)
                return
            } catch {
                onError(error)
                failures += 1
            }
            // More written while that round ran: send it at once. (What cannot be sent now,
            // such as items of a locked class, waits for the next wake.)
            let pendingAfterRound = (try? outboxLength()) ?? 0
            fullRound = failures > 0
            if sentSome, pendingAfterRound > 0 { continue }
            // Woken by the watch or a write in this process; otherwise every 100 ms the outbox
            // is looked at, since another process may write to the vault. A full round every
            // 5 s regardless (a watch misses nothing, but an endpoint can hang); after
            // failures, sooner at first, then backing off.
            let pause = failures == 0 ? 5_000 : min(5_000, 250 << min(failures, 5))
            var waited = 0
            while !shouldStop(), inbox.wait(milliseconds: 100) == false {
                waited += 100
                if failures == 0, ((try? outboxLength()) ?? 0) != pendingAfterRound { break }
                if waited >= pause {
                    fullRound = true
                    break
                }
            }
            if inbox.takeFullRound() { fullRound = true }
        }
    }

    /// Reports a round that refused values or a member list to `onError` (the agent's log):
    /// the round did less than asked.
    private static func report(_ round: SyncRound, to onError: @Sendable (SyncError) -> Void) {
        if round.refused > 0 {
            onError(.tampered("\(round.refused) values did not open with the group's keys or were signed by no current member, and were not used"))
        }
        if let kind = round.membershipAlarm {
            onError(.tampered("etcd served a \(kind == .rolledBack ? "rolled-back" : "forked") member list; it was refused and this device's list written back"))
        }
    }

    /// What woke the loop: changes the watch reported, a write in this process, or a reason
    /// for a full round (a compacted history, a watch that ended).
    private final class Inbox: Sendable {
        private struct Posted {
            var puts: [EtcdClient.KeyValue] = []
            var revision: Int64 = 0
            var local = false
            var fullRound = false
        }

        private let posted = Mutex(Posted())
        private let semaphore = DispatchSemaphore(value: 0)

        func post(puts more: [EtcdClient.KeyValue] = [], revision newest: Int64 = 0, local write: Bool = false, fullRound round: Bool = false) {
            posted.withLock { posted in
                posted.puts += more
                posted.revision = max(posted.revision, newest)
                posted.local = posted.local || write
                posted.fullRound = posted.fullRound || round
            }
            semaphore.signal()
        }

        /// Whether something was posted within `milliseconds`.
        func wait(milliseconds: Int) -> Bool { semaphore.wait(timeout: .now() + .milliseconds(milliseconds)) == .success }

        func take() -> (puts: [EtcdClient.KeyValue], revision: Int64, local: Bool) {
            posted.withLock { posted in
                defer {
                    posted.puts = []
                    posted.local = false
                }
                return (posted.puts, posted.revision, posted.local)
            }
        }

        func takeFullRound() -> Bool {
            posted.withLock { posted in
                defer { posted.fullRound = false }
                return posted.fullRound
            }
        }
    }

    /// Lets the watch thread read the vault while its loop runs, and no longer.
    private final class WatchGate: Sendable {
        private let open = Mutex(true)

        /// What `body` read, or nil once the gate is closed (then `body` does not run).
        func read<R: Sendable>(_ body: () -> R) -> R? {
            open.withLock { open in open ? body() : nil }
        }

        /// Closes the gate, after the read under way (if any) is done.
        func close() { open.withLock { $0 = false } }
    }

    /// Sends the outbox, and nothing else; each request to etcd bounded by `timeout`.
    private func pushOnly(timeoutMilliseconds timeout: Int = 4_000) throws(SyncError) -> Int {
        try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) -> Int in
            var state = try state()
            let sent = try push(&state, &revisions, client: try EtcdClient(state.cluster, requestTimeoutMilliseconds: timeout))
            if sent > 0 { noteExchange() }
            return sent
        }
    }

    /// Sends the outbox now, waiting at most `milliseconds`: what a short-lived program does
    /// after writing a synchronizable item, so the change leaves at once when the cluster
    /// answers. A cluster that does not answer in time costs the caller no more than the wait
    /// and fails nothing: the changes stay in the outbox for the sync agent (a push still
    /// under way when the wait ends finishes, or is cut short with its process, harmlessly:
    /// every write is a compare-and-swap and the outbox is acknowledged only after etcd took it).
    ///
    /// - Returns: how many changes etcd took, or nil when it did not answer in time or failed.
    package func sendNow(within milliseconds: Int) -> Int? {
        let outcome = Outcome()
        DispatchQueue(label: "keychain.sync.send").async { [self] in
            outcome.finish(try? pushOnly(timeoutMilliseconds: milliseconds))
        }
        return outcome.wait(milliseconds: milliseconds)
    }

    /// The result of work handed to another thread, waited for with a bound.
    private final class Outcome: Sendable {
        private let value = Mutex<Int?>(nil)
        private let done = DispatchSemaphore(value: 0)

        func finish(_ result: Int?) {
            value.withLock { $0 = result }
            done.signal()
        }

        func wait(milliseconds: Int) -> Int? {
            guard done.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return nil }
            return value.withLock { $0 }
        }
    }

    /// How long ago, in milliseconds, this engine was made or last sent or applied a change:
    /// a sync agent that has exchanged nothing for a while exits.
    package var millisecondsSinceExchange: UInt64 { SyncChange.nowMilliseconds() &- lastExchangeMilliseconds.withLock { $0 } }

    func noteExchange() { lastExchangeMilliseconds.withLock { $0 = SyncChange.nowMilliseconds() } }

    /// Applies the item changes a watch reported (the watch started at the cursor, so every
    /// change up to `revision` has been reported), and follows a changed member list.
    private func applyWatched(_ puts: [EtcdClient.KeyValue], revision: Int64) throws(SyncError) {
        try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) in
            var state = try state()
            let items = SyncRecords.itemsPrefix(state)
            var received: [EtcdClient.KeyValue] = []
            var membership = false
            for kv in puts {
                guard kv.key.starts(with: items) else {
                    membership = true
                    continue
                }
                if revisions.isOwn(kv.modRevision) { continue }
                received.append(kv)
            }
            if membership { try refreshMembership(&state, client: try EtcdClient(state.cluster)) }
            guard !received.isEmpty else { return }
            let result = try apply(received, upTo: revision, &state, &revisions)
            if result.applied > 0 { noteExchange() }
            if result.refused > 0 { throw .tampered("\(result.refused) values did not open with the group's keys or were signed by no current member, and were not used") }
        }
    }

    /// How many changes wait in the outbox.
    package func outboxLength() throws(SyncError) -> Int {
        return try Self.onVault(vault) { (open) throws(StoreError) in try open.outbox(limit: 0).pending }
    }

}

private func sleepMilliseconds(_ milliseconds: Int) { usleep(UInt32(milliseconds) * 1_000) }
