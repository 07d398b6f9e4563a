import Dispatch
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps one vault's synchronizable items in step with the other devices of its sync group,
/// through an etcd cluster that is trusted with nothing: items travel sealed under the
/// group's key, named by HMACs, padded; the newest change to an item wins (by the clock
/// inside its seal, not by when it reached etcd), deletes travel as tombstones.
///
/// Writes never wait for the network: the vault journals each change in the write's own
/// transaction (the outbox), and ``syncOnce()`` or ``run(until:onError:)`` sends it when etcd answers.
/// Received changes are applied with the pull cursor in one transaction, so a crash never
/// skips or repeats one.
public final class SyncEngine: @unchecked Sendable {
    let vault: Vault
    private let mutex = Lock()
    /// The revision etcd last gave each item key this engine read or wrote (guarded by
    /// `mutex`): a push to a key it knows goes straight to its compare-and-swap.
    private var knownRevisions: [[UInt8]: Int64] = [:]
    /// The revisions of this engine's own pushes, whose watch events need no applying.
    private var ownRevisions: Set<Int64> = []

    /// The engine of `vault`, which must be enrolled (``create(vault:cluster:deviceName:)``,
    /// ``join(vault:cluster:code:deviceName:)``).
    ///
    /// - Throws: ``SyncError/notEnrolled``, or ``SyncError/store(_:)`` when the vault cannot be read.
    public init(vault: Vault) throws(SyncError) {
        self.vault = vault
        _ = try state()
    }

    // MARK: - Enrollment

    /// Starts a sync group with this vault as its first device: new group keys, the member
    /// list on the cluster, the vault's synchronizable items in the outbox.
    ///
    /// - Throws: ``SyncError/alreadyEnrolled``; ``SyncError/unreachable(_:)`` when no endpoint answers.
    public static func create(vault: Vault, cluster: SyncCluster, deviceName: String) throws(SyncError) -> SyncEngine {
        guard try onVault(vault, creating: true, { (open) throws(StoreError) in try open.readSyncState() }) == nil else { throw .alreadyEnrolled }
        let keys = try deviceKeys()
        let state = SyncState(
            userID: Random.bytes(16), deviceID: Random.bytes(16), deviceName: deviceName, privateKey: keys.privateKey, publicKey: keys.publicKey,
            namingKey: SecretBytes.random(count: 32), epochKeys: [1: SecretBytes.random(count: 32)], epoch: 1, cursor: 0, lastPull: 0, refused: 0,
            cluster: cluster.configuration)
        let client = try EtcdClient(state.cluster)
        let members = [SyncRecords.Member(deviceID: state.deviceID, publicKey: state.publicKey, name: deviceName)]
        let written = try client.put(
            SyncRecords.membersKey(state.prefix), try SyncRecords.sealMembers(members, epoch: 1, key: state.epochKey, prefix: state.prefix), ifModRevision: 0)
        guard written.succeeded else { throw .malformed("a new group's member list already exists") }
        try onVault(vault) { (open) throws(StoreError) in try open.enrollSync(device: state.deviceID, state: state.encoded()) }
        return try SyncEngine(vault: vault)
    }

    /// Joins the sync group an existing device invited this vault into (``invite()``): the
    /// group's keys come from the invitation, which the code opens and which is used up.
    ///
    /// - Throws: ``SyncError/invalidInvitation(_:)`` for a code this program did not make,
    ///   ``SyncError/invitationNotFound`` for one used, expired or from another cluster,
    ///   ``SyncError/tampered(_:)`` when what etcd holds does not open with it.
    public static func join(vault: Vault, cluster: SyncCluster, code: String, deviceName: String) throws(SyncError) -> SyncEngine {
        let invitation = try InvitationCode(parsing: code)
        guard try onVault(vault, creating: true, { (open) throws(StoreError) in try open.readSyncState() }) == nil else { throw .alreadyEnrolled }
        let client = try EtcdClient(cluster.configuration)
        let prefix = Array("/kc1/\(Digest.hex(invitation.userID))/".utf8)
        let invitationKey = SyncRecords.invitationKey(prefix, secret: invitation.secret)
        guard let sealed = try client.range(invitationKey).kvs.first else { throw .invitationNotFound }
        let group = try SyncRecords.openInvitation(sealed.value, secret: invitation.secret, prefix: prefix)
        let keys = try deviceKeys()
        var state = SyncState(
            userID: invitation.userID, deviceID: Random.bytes(16), deviceName: deviceName, privateKey: keys.privateKey, publicKey: keys.publicKey,
            namingKey: group.naming, epochKeys: group.keys, epoch: group.epoch, cursor: 0, lastPull: 0, refused: 0, cluster: cluster.configuration)
        // Added to the member list by compare-and-swap: two devices joining at once both stay.
        for _ in 0..<16 {
            guard let list = try client.range(SyncRecords.membersKey(prefix)).kvs.first else { throw .tampered("the group has no member list") }
            guard let epoch = SyncRecords.membersEpoch(list.value), let key = state.epochKeys[epoch] else {
                throw .tampered("the member list is at an epoch the invitation does not hold")
            }
            state.epoch = epoch
            var members = try SyncRecords.openMembers(list.value, key: key, prefix: prefix)
            members.append(SyncRecords.Member(deviceID: state.deviceID, publicKey: state.publicKey, name: deviceName))
            let updated = try SyncRecords.sealMembers(members, epoch: epoch, key: key, prefix: prefix)
            if try client.put(SyncRecords.membersKey(prefix), updated, ifModRevision: list.modRevision).succeeded { break }
        }
        _ = try? client.delete(invitationKey)
        try onVault(vault) { (open) throws(StoreError) in try open.enrollSync(device: state.deviceID, state: state.encoded()) }
        return try SyncEngine(vault: vault)
    }

    /// An invitation for another device to join this group: a code to type there, valid for
    /// an hour and once. The group's keys wait in etcd sealed under a secret only the code carries.
    ///
    /// - Throws: ``SyncError/unreachable(_:)`` when no endpoint answers.
    public func invite() throws(SyncError) -> String {
        let state = try state()
        let client = try EtcdClient(state.cluster)
        let secret = SecretBytes.random(count: 16)
        let lease = try client.grantLease(seconds: 3_600)
        let written = try client.put(
            SyncRecords.invitationKey(state.prefix, secret: secret), try SyncRecords.sealInvitation(state, secret: secret), ifModRevision: 0, lease: lease)
        guard written.succeeded else { throw .malformed("an invitation with a new random secret already exists") }
        return InvitationCode(userID: state.userID, secret: secret).text
    }

    /// Removes a device (by the start of its id, or its name) from the group: a new group key
    /// goes to every other member, so it reads nothing written from now on.
    ///
    /// - Throws: ``SyncError/invalidArgument(_:)`` when no member, or more than one, matches.
    public func removeDevice(_ which: String) throws(SyncError) {
        try mutex.withLock { () throws(SyncError) in
            var state = try state()
            let client = try EtcdClient(state.cluster)
            try refreshMembership(&state, client: client)
            for _ in 0..<16 {
                guard let list = try client.range(SyncRecords.membersKey(state.prefix)).kvs.first else { throw .tampered("the group has no member list") }
                var members = try SyncRecords.openMembers(list.value, key: state.epochKey, prefix: state.prefix)
                let matches = members.filter { Digest.hex($0.deviceID).hasPrefix(which.lowercased()) || $0.name == which }
                guard matches.count == 1, let removed = matches.first else {
                    throw .invalidArgument(matches.isEmpty ? "no device of the group is '\(which)'" : "'\(which)' names \(matches.count) devices; give more of the id")
                }
                guard removed.deviceID != state.deviceID else { throw .invalidArgument("a device cannot remove itself; use 'keychain sync leave'") }
                members.removeAll { $0.deviceID == removed.deviceID }
                let epoch = state.epoch + 1
                let newKey = SecretBytes.random(count: 32)
                for member in members {
                    let share = try SyncRecords.sealShare(newKey, epoch: epoch, to: member, previousKey: state.epochKey, prefix: state.prefix)
                    try client.put(SyncRecords.shareKey(state.prefix, epoch: epoch, device: member.deviceID), share)
                }
                let sealed = try SyncRecords.sealMembers(members, epoch: epoch, key: newKey, prefix: state.prefix)
                guard try client.put(SyncRecords.membersKey(state.prefix), sealed, ifModRevision: list.modRevision).succeeded else { continue }
                state.epochKeys[epoch] = newKey
                state.epoch = epoch
                try save(state)
                return
            }
            throw .unreachable("the member list kept changing")
        }
    }

    /// Leaves the group: the vault's items stay, and travel no more.
    public func leave() throws(SyncError) {
        try Self.onVault(vault) { (open) throws(StoreError) in try open.leaveSync() }
    }

    // MARK: - Rounds

    /// Sends the outbox and applies what the other devices wrote since the last round.
    ///
    /// - Throws: ``SyncError/unreachable(_:)`` when no endpoint answers (nothing is lost: the
    ///   outbox stays), ``SyncError/removed`` when this device was removed from the group.
    @discardableResult
    public func syncOnce() throws(SyncError) -> SyncRound {
        try mutex.withLock { () throws(SyncError) in
            var state = try state()
            let client = try EtcdClient(state.cluster)
            var round = SyncRound()
            try refreshMembership(&state, client: client)
            round.sent = try push(&state, client: client)
            let pulled = try pull(&state, client: client)
            round.received = pulled.applied
            round.superseded = pulled.superseded
            round.refused = pulled.refused
            return round
        }
    }

    /// Syncs until `shouldStop` returns true: a full round now and every 5 s; between them,
    /// what the watch reports is applied as it arrives, and what this process writes is sent
    /// at once (what other processes write, within 100 ms). Errors are reported to `onError`
    /// and retried after a pause; ``SyncError/removed`` ends it.
    public func run(until shouldStop: @escaping @Sendable () -> Bool, onError: @escaping @Sendable (SyncError) -> Void = { _ in }) {
        let inbox = Inbox()
        // A write in this process wakes the loop at once.
        try? Self.onVault(vault) { (open) throws(StoreError) in open.mutex.withLock { open.syncWake = { inbox.post(local: true) } } }
        defer { try? Self.onVault(vault) { (open) throws(StoreError) in open.mutex.withLock { open.syncWake = nil } } }
        DispatchQueue(label: "keychain.sync.watch").async { [self] in
            while !shouldStop() {
                guard let state = try? state(), let client = try? EtcdClient(state.cluster) else {
                    sleepMilliseconds(500)
                    continue
                }
                do {
                    try client.watch(prefix: state.prefix, startRevision: state.cursor + 1, idleSeconds: 5) { event in
                        switch event {
                        case .changed(let revision, let puts): inbox.post(puts: puts, revision: revision)
                        case .compacted: inbox.post(fullRound: true)
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
                    sentSome = try syncOnce().sent > 0
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

    /// What woke the loop: changes the watch reported, a write in this process, or a reason
    /// for a full round (a compacted history, a watch that ended).
    private final class Inbox: @unchecked Sendable {
        private let lock = Lock()
        private let semaphore = DispatchSemaphore(value: 0)
        private var puts: [EtcdClient.KeyValue] = []
        private var revision: Int64 = 0
        private var local = false
        private var fullRound = false

        func post(puts more: [EtcdClient.KeyValue] = [], revision newest: Int64 = 0, local write: Bool = false, fullRound round: Bool = false) {
            lock.withLock {
                puts += more
                revision = max(revision, newest)
                local = local || write
                fullRound = fullRound || round
            }
            semaphore.signal()
        }

        /// Whether something was posted within `milliseconds`.
        func wait(milliseconds: Int) -> Bool { semaphore.wait(timeout: .now() + .milliseconds(milliseconds)) == .success }

        func take() -> (puts: [EtcdClient.KeyValue], revision: Int64, local: Bool) {
            lock.withLock {
                defer {
                    puts = []
                    local = false
                }
                return (puts, revision, local)
            }
        }

        func takeFullRound() -> Bool {
            lock.withLock {
                defer { fullRound = false }
                return fullRound
            }
        }
    }

    /// Sends the outbox, and nothing else.
    private func pushOnly() throws(SyncError) -> Int {
        try mutex.withLock { () throws(SyncError) in
            var state = try state()
            return try push(&state, client: try EtcdClient(state.cluster))
        }
    }

    /// Applies the item changes a watch reported (the watch started at the cursor, so every
    /// change up to `revision` has been reported), and follows a changed member list.
    private func applyWatched(_ puts: [EtcdClient.KeyValue], revision: Int64) throws(SyncError) {
        try mutex.withLock { () throws(SyncError) in
            var state = try state()
            let items = SyncRecords.itemsPrefix(state)
            var received: [EtcdClient.KeyValue] = []
            var membership = false
            for kv in puts {
                guard kv.key.starts(with: items) else {
                    membership = true
                    continue
                }
                if ownRevisions.contains(kv.modRevision) { continue }
                received.append(kv)
            }
            if membership { try refreshMembership(&state, client: try EtcdClient(state.cluster)) }
            guard !received.isEmpty else { return }
            _ = try apply(received, upTo: revision, &state)
        }
    }

    /// How many changes wait in the outbox.
    public func outboxLength() throws(SyncError) -> Int {
        return try Self.onVault(vault) { (open) throws(StoreError) in try open.outbox(limit: 0).pending }
    }

    /// Syncs `vault` for as long as the process runs, on a thread of its own, if it is
    /// enrolled (what ``VaultConfiguration/syncsInBackground`` starts). Failures are retried
    /// quietly; `keychain sync status` shows the outbox.
    static func startInBackground(_ vault: Vault) {
        guard let engine = try? SyncEngine(vault: vault) else { return }
        DispatchQueue(label: "keychain.sync").async { engine.run(until: { false }) }
    }

    // MARK: - Status

    /// Where this device syncs, who the group's members are, and how far it is behind.
    ///
    /// - Throws: ``SyncError/notEnrolled``; a cluster that does not answer is reported in the
    ///   status (``SyncStatus/clusterRevision`` nil), not thrown.
    public func status() throws(SyncError) -> SyncStatus {
        let state = try state()
        var status = SyncStatus(
            endpoints: state.cluster.endpoints, deviceID: Digest.hex(state.deviceID), deviceName: state.deviceName, epoch: state.epoch,
            outbox: try outboxLength(), cursor: state.cursor, lastPull: state.lastPull, refused: Int(state.refused))
        do throws(SyncError) {
            let client = try EtcdClient(state.cluster)
            if let list = try client.range(SyncRecords.membersKey(state.prefix)).kvs.first,
                let epoch = SyncRecords.membersEpoch(list.value), let key = state.epochKeys[epoch]
            {
                status.members = try SyncRecords.openMembers(list.value, key: key, prefix: state.prefix).map {
                    SyncStatus.Device(id: Digest.hex($0.deviceID), name: $0.name)
                }
            }
            status.clusterRevision = try client.range(SyncRecords.membersKey(state.prefix)).revision
        } catch {
            status.clusterError = error.description
        }
        return status
    }

    // MARK: - Internals

    func state() throws(SyncError) -> SyncState {
        guard let sealed = try Self.onVault(vault, { (open) throws(StoreError) in try open.readSyncState() }) else { throw .notEnrolled }
        guard let state = SyncState.decode(sealed) else { throw .store(.corrupted("the vault's sync state does not decode")) }
        return state
    }

    func save(_ state: SyncState) throws(SyncError) {
        try Self.onVault(vault) { (open) throws(StoreError) in try open.writeSyncState(state.encoded()) }
    }

    /// Follows the member list to a newer epoch: its key comes in a share sealed to this
    /// device; a newer epoch with no share for it means it was removed. A cluster that lost
    /// the list (wiped) gets it back from its devices, each adding itself.
    private func refreshMembership(_ state: inout SyncState, client: EtcdClient) throws(SyncError) {
        let me = SyncRecords.Member(deviceID: state.deviceID, publicKey: state.publicKey, name: state.deviceName)
        guard let list = try client.range(SyncRecords.membersKey(state.prefix)).kvs.first else {
            _ = try client.put(
                SyncRecords.membersKey(state.prefix), try SyncRecords.sealMembers([me], epoch: state.epoch, key: state.epochKey, prefix: state.prefix),
                ifModRevision: 0)
            return
        }
        guard let epoch = SyncRecords.membersEpoch(list.value) else { throw .tampered("the member list has no epoch") }
        // An older list (a cluster refilled from an old copy): this device's epoch stands.
        guard epoch >= state.epoch else { return }
        if epoch == state.epoch {
            var members = try SyncRecords.openMembers(list.value, key: state.epochKey, prefix: state.prefix)
            guard !members.contains(where: { $0.deviceID == state.deviceID }) else { return }
            // A removal always starts a new epoch: missing from a list of its own epoch, this
            // device was lost with a wiped cluster (or a list from before it joined came back).
            members.append(me)
            let sealed = try SyncRecords.sealMembers(members, epoch: epoch, key: state.epochKey, prefix: state.prefix)
            _ = try client.put(SyncRecords.membersKey(state.prefix), sealed, ifModRevision: list.modRevision)
            return
        }
        var changed = false
        while state.epoch < epoch {
            let next = state.epoch + 1
            guard let share = try client.range(SyncRecords.shareKey(state.prefix, epoch: next, device: state.deviceID)).kvs.first else {
                throw .removed
            }
            guard let key = SyncRecords.openShare(share.value, epoch: next, state: state, previousKey: state.epochKey) else {
                throw .tampered("the group key of epoch \(next) does not open or was not made by a member")
            }
            state.epochKeys[next] = key
            state.epoch = next
            changed = true
        }
        let members = try SyncRecords.openMembers(list.value, key: state.epochKey, prefix: state.prefix)
        guard members.contains(where: { $0.deviceID == state.deviceID }) else { throw .removed }
        if changed { try save(state) }
    }

    /// Sends the outbox, each change by compare-and-swap against what etcd holds: written
    /// when the key is new or holds an older change; left when etcd holds a newer one (the
    /// pull applies it) or this very change (a write that timed out and committed later).
    /// Changes go in transactions of up to 128, each put conditional on the revision seen; a
    /// transaction that loses a race is retried one change at a time.
    private func push(_ state: inout SyncState, client: EtcdClient) throws(SyncError) -> Int {
        var sent = 0
        // What etcd holds at each key, read once for the whole group when the outbox is large.
        var current: [[UInt8]: EtcdClient.KeyValue] = [:]
        var readWholeGroup = false
        while true {
            let outbox = try Self.onVault(vault) { (open) throws(StoreError) in try open.outbox(limit: Self.outboxBatch) }
            guard !outbox.entries.isEmpty else { return sent }
            var outgoing: [Outgoing] = []
            for entry in outbox.entries {
                let key = try SyncRecords.itemKey(entry.change, state: state)
                outgoing.append(Outgoing(entry: entry, key: key, sealed: try SyncRecords.sealItem(entry.change, at: key, state: state)))
            }
            // A large outbox: one read of the whole group; a few changes: a read of each key
            // whose revision this engine does not know (a known one goes straight to its
            // compare-and-swap, which fails if it moved).
            if outgoing.count > 16, !readWholeGroup {
                let prefix = SyncRecords.itemsPrefix(state)
                for kv in try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs { current[kv.key] = kv }
                readWholeGroup = true
            } else if !readWholeGroup {
                for change in outgoing where knownRevisions[change.key] == nil { current[change.key] = try client.range(change.key).kvs.first }
            }
            var done: [OpenVault.OutboxEntry] = []
            var writes: [Outgoing] = []
            for change in outgoing {
                if change.isSuperseded(by: current[change.key], state: state) { done.append(change.entry) } else { writes.append(change) }
            }
            func seen(_ key: [UInt8]) -> Int64 { current[key]?.modRevision ?? knownRevisions[key] ?? 0 }
            var start = 0
            while start < writes.count {
                let chunk = Array(writes[start..<min(start + Self.transactionSize, writes.count)])
                start += chunk.count
                let written = try client.putAll(chunk.map { ($0.key, $0.sealed, seen($0.key)) })
                if written.succeeded {
                    sent += chunk.count
                    done += chunk.map(\.entry)
                    noteOwn(chunk.map(\.key), revision: written.revision)
                    for change in chunk { current[change.key] = nil }
                    continue
                }
                for change in chunk {
                    current[change.key] = nil
                    switch try pushOne(change, state: state, client: client) {
                    case .written:
                        sent += 1
                        done.append(change.entry)
                    case .superseded: done.append(change.entry)
                    case .contended: break
                    }
                }
            }
            try Self.onVault(vault) { (open) throws(StoreError) in try open.acknowledge(done) }
            if done.isEmpty || (outbox.entries.count < Self.outboxBatch && outbox.pending <= outbox.entries.count) { return sent }
        }
    }

    /// One change of the outbox, sealed for its key.
    private struct Outgoing {
        var entry: OpenVault.OutboxEntry
        var key: [UInt8]
        var sealed: [UInt8]

        /// Whether etcd holds this change already, or a newer one.
        func isSuperseded(by held: EtcdClient.KeyValue?, state: SyncState) -> Bool {
            guard let held, let remote = SyncRecords.openItem(held.value, at: key, state: state) else { return false }
            return !entry.change.isNewer(thanClock: remote.clock, origin: remote.origin)
        }
    }

    /// How many outbox entries a push reads (and acknowledges, in one vault transaction) at a time.
    static let outboxBatch = 1_024
    /// Changes per transaction: etcd takes up to 128 operations in each of a transaction's
    /// compare and success lists (`--max-txn-ops`).
    static let transactionSize = 128

    private enum PushOutcome { case written, superseded, contended }

    /// Notes this engine's own write at `revision` to `keys`.
    private func noteOwn(_ keys: [[UInt8]], revision: Int64) {
        for key in keys { remember(key, revision: revision) }
        if ownRevisions.count >= 10_000 { ownRevisions.removeAll(keepingCapacity: true) }
        ownRevisions.insert(revision)
    }

    /// One change by compare-and-swap, re-reading after each lost race (a few times; then it
    /// stays in the outbox for the next round).
    private func pushOne(_ change: Outgoing, state: SyncState, client: EtcdClient) throws(SyncError) -> PushOutcome {
        var current = try client.range(change.key).kvs.first
        for _ in 0..<8 {
            if change.isSuperseded(by: current, state: state) { return .superseded }
            let written = try client.put(change.key, change.sealed, ifModRevision: current?.modRevision ?? 0)
            if written.succeeded {
                noteOwn([change.key], revision: written.revision)
                return .written
            }
            current = written.current
        }
        return .contended
    }

    /// Applies every item changed on etcd since the cursor, newest wins, with the new cursor
    /// in the same transaction. A cluster whose revision went back (wiped, replaced) gets
    /// everything this device has again.
    private func pull(_ state: inout SyncState, client: EtcdClient) throws(SyncError) -> OpenVault.ApplyResult {
        let prefix = SyncRecords.itemsPrefix(state)
        var answer = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix), minModRevision: state.cursor + 1)
        if answer.revision < state.cursor {
            try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() }
            state.cursor = 0
            _ = try push(&state, client: client)
            answer = try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix))
        }
        return try apply(answer.kvs, upTo: answer.revision, &state)
    }

    /// Opens what etcd holds at each key (refusing what does not open, or opens to an item
    /// that belongs at another key) and applies it, newest wins, with the cursor advanced to
    /// `revision` in the same transaction.
    private func apply(_ kvs: [EtcdClient.KeyValue], upTo revision: Int64, _ state: inout SyncState) throws(SyncError) -> OpenVault.ApplyResult {
        var changes: [SyncChange] = []
        var refused = 0
        for kv in kvs {
            remember(kv.key, revision: kv.modRevision)
            guard let change = SyncRecords.openItem(kv.value, at: kv.key, state: state),
                (try? SyncRecords.itemKey(change, state: state)) == kv.key
            else {
                refused += 1
                continue
            }
            changes.append(change)
        }
        state.cursor = max(state.cursor, revision)
        state.lastPull = Self.nowMilliseconds()
        state.refused += UInt32(refused)
        let encoded = state.encoded()
        var result = try Self.onVault(vault) { (open) throws(StoreError) in try open.applyReceived(changes, state: encoded) }
        result.refused += refused
        return result
    }

    /// Notes the revision etcd gave a key (bounded: forgotten whole when large).
    private func remember(_ key: [UInt8], revision: Int64) {
        if knownRevisions.count >= 100_000 { knownRevisions.removeAll(keepingCapacity: true) }
        knownRevisions[key] = revision
    }

    private static func deviceKeys() throws(SyncError) -> (privateKey: SecretBytes, publicKey: [UInt8]) {
        do {
            return try X25519.generate()
        } catch {
            throw .store(.unavailable("OpenSSL failed to make a key pair: \(error)"))
        }
    }

    /// Runs `body` on the open vault (created first when `creating`: enrolling is a write),
    /// unlocking it with the configured passphrase when it is locked.
    static func onVault<R>(_ vault: Vault, creating: Bool = false, _ body: (OpenVault) throws(StoreError) -> R) throws(SyncError) -> R {
        do {
            return try vault.withOpened(creating: creating, body)
        } catch .noVault {
            throw .notEnrolled
        } catch {
            throw .store(error)
        }
    }

    static func nowMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
    }
}

private func sleepMilliseconds(_ milliseconds: Int) { usleep(UInt32(milliseconds) * 1_000) }
