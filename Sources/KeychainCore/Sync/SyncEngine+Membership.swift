/// Who is in the group: the chain of member lists each device checks before it follows one,
/// new epochs (a removal, the resolution of a fork), and the alarms a device raises when etcd
/// serves a list that does not belong to its history.
extension SyncEngine {
    /// The member lists on etcd under `prefix`, by epoch.
    static func memberLists(_ prefix: [UInt8], client: EtcdClient) throws(SyncError) -> [UInt32: EtcdClient.KeyValue] {
        let start = SyncRecords.membersPrefix(prefix)
        var lists: [UInt32: EtcdClient.KeyValue] = [:]
        for kv in try client.range(start, rangeEnd: EtcdClient.rangeEnd(ofPrefix: start)).kvs {
            guard let epoch = SyncRecords.membersEpoch(kv.value), kv.key == SyncRecords.membersKey(prefix, epoch: epoch) else {
                throw .tampered("a member list is not at its epoch's key")
            }
            lists[epoch] = kv
        }
        if lists.isEmpty, try !client.range(SyncRecords.formerMembersKey(prefix)).kvs.isEmpty { throw SyncRecords.formerFormat }
        return lists
    }

    /// Follows the chain of member lists forward, never back. A newer epoch's key comes in a
    /// share sealed to this device (none: it was removed); its list must name only members of
    /// the list this device holds, be signed by one of them, and be the first list ever
    /// written at its key (one that replaced another is a second history). Everything this
    /// device holds is then sealed again under the new epoch.
    ///
    /// A list of this device's epoch gone (rolled back) or lacking members is repaired and
    /// reported; one that does not open with this epoch's key, or a new epoch that breaks the
    /// chain, is a fork: reported, and this device sends nothing until a person resolves it
    /// (``resolveFork()``), or it follows a newer epoch that extends its own list.
    func refreshMembership(_ state: inout SyncState, client: EtcdClient) throws(SyncError) {
        let lists = try Self.memberLists(state.prefix, client: client)
        let held = try heldMembers(state)
        guard let newest = lists.keys.max() else {
            // A cluster that lost the lists (wiped): the held one goes back.
            if !state.members.isEmpty { _ = try client.put(SyncRecords.membersKey(state.prefix, epoch: state.epoch), state.members, ifModRevision: 0) }
            return
        }
        if newest > state.epoch { return try follow(lists, to: newest, held: held, &state, client: client) }
        guard let current = lists[state.epoch] else {
            // This epoch's list is gone and an older one is the newest: rolled back.
            if !state.members.isEmpty { _ = try client.put(SyncRecords.membersKey(state.prefix, epoch: state.epoch), state.members, ifModRevision: 0) }
            return try raise(.rolledBack, servedEpoch: newest, &state)
        }
        if state.alarm?.kind == .forkedHistory { throw .forked }
        guard let served = try? SyncRecords.openMemberList(current.value, key: state.epochKey, prefix: state.prefix), served.isSigned(byOneOf: served.members)
        else {
            return try raise(.forkedHistory, servedEpoch: state.epoch, &state)
        }
        let me = SyncRecords.member(of: state)
        let key = SyncRecords.membersKey(state.prefix, epoch: state.epoch)
        if held.contains(where: { member in served.members.contains { $0.deviceID == member.deviceID && $0 != member } }) {
            _ = try client.put(key, state.members, ifModRevision: current.modRevision)
            return try raise(.forked, servedEpoch: state.epoch, &state)
        }
        let missing = held.filter { member in !served.members.contains { $0.deviceID == member.deviceID } }
        guard missing.isEmpty else {
            // Members gone without a new epoch: a version from before they joined came back
            // (rolled back), or, when it also has members this device never saw, one that
            // other devices were shown instead of this one's (forked joins). The held members
            // are put back, with the joins the served list has.
            let forked = served.members.contains { member in !held.contains { $0.deviceID == member.deviceID } }
            let merged = try SyncRecords.sealMembers(served.members + missing, epoch: state.epoch, key: state.epochKey, prefix: state.prefix, signer: state)
            if try client.put(key, merged, ifModRevision: current.modRevision).succeeded { state.members = merged }
            return try raise(forked ? .forked : .rolledBack, servedEpoch: state.epoch, &state)
        }
        if !served.members.contains(where: { $0.deviceID == me.deviceID }) { return try raise(.removed, servedEpoch: state.epoch, &state) }
        if state.members != current.value {
            state.members = current.value
            try save(state)
        }
    }

    /// The members of the list this device holds (itself alone before it holds one).
    func heldMembers(_ state: SyncState) throws(SyncError) -> [SyncRecords.Member] {
        guard !state.members.isEmpty else { return [SyncRecords.member(of: state)] }
        return try SyncRecords.openMembers(state.members, key: state.epochKey, prefix: state.prefix)
    }

    /// Moves from this device's epoch to `newest`, one link of the chain at a time.
    private func follow(
        _ lists: [UInt32: EtcdClient.KeyValue], to newest: UInt32, held: [SyncRecords.Member], _ state: inout SyncState, client: EtcdClient
    ) throws(SyncError) {
        var next = state
        var previous = held
        for number in (state.epoch + 1)...newest {
            guard let kv = lists[number] else { throw .tampered("the member list of epoch \(number) is missing while a newer one exists") }
            guard let share = try client.range(try SyncRecords.shareKey(state.prefix, epoch: number, device: state.deviceID, previousKey: next.epochKey)).kvs.first else {
                return try raise(.removed, servedEpoch: number, &state)
            }
            guard let key = SyncRecords.openShare(share.value, epoch: number, state: next, previousKey: next.epochKey) else {
                // Tagged under another key of the epoch before: made in another history.
                return try raise(.forkedHistory, servedEpoch: number, &state)
            }
            guard let list = try? SyncRecords.openMemberList(kv.value, key: key, prefix: state.prefix), list.isSigned(byOneOf: previous),
                list.members.allSatisfy({ member in previous.contains(member) })
            else {
                return try raise(.forkedHistory, servedEpoch: number, &state)
            }
            if try replacedAnother(kv, since: next.epochSince, client: client) { return try raise(.forkedHistory, servedEpoch: number, &state) }
            guard list.members.contains(where: { $0.deviceID == state.deviceID }) else { return try raise(.removed, servedEpoch: number, &state) }
            next.epochKeys[number] = key
            next.epoch = number
            next.members = kv.value
            // No current member writes under the epoch before once this list exists: each
            // write compares that no list of its next epoch does, in its own transaction.
            next.epochSince = kv.createRevision
            previous = list.members
        }
        next.retiredRecords = true
        if next.alarm?.kind == .forkedHistory || next.alarm?.kind == .removed { next.alarm = nil }
        state = next
        try save(state)
        // Everything this device holds is sealed again under the new epoch and names.
        try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() }
    }

    /// Whether the list at `kv`'s key was written where another had been (deleted, then
    /// written again): the first list of an epoch is the one the group's members made.
    /// A history compacted away cannot tell; what a device can and cannot see then is in
    /// the security model.
    private func replacedAnother(_ kv: EtcdClient.KeyValue, since revision: Int64, client: EtcdClient) throws(SyncError) -> Bool {
        guard let puts = try client.history(of: kv.key, from: min(revision, kv.createRevision), through: kv.modRevision) else { return false }
        return puts.contains { $0.createRevision != kv.createRevision }
    }

    /// Keeps `kind` for `sync status` and every command's standard error. A fork or a
    /// removal throws (nothing more is sent); a rollback, repaired, does not (the round
    /// reports it and exits non-zero).
    private func raise(_ kind: SyncMembershipAlarm.Kind, servedEpoch: UInt32, _ state: inout SyncState) throws(SyncError) {
        state.alarm = SyncMembershipAlarm(
            kind: kind, at: SyncChange.nowMilliseconds(), servedEpoch: servedEpoch, heldEpoch: state.epoch,
            count: EtcdRevision.tally(state.alarm?.kind == kind ? state.alarm?.count ?? 0 : 0, adding: 1))
        try save(state)
        switch kind {
        case .forkedHistory: throw .forked
        case .removed: throw .removed
        case .rolledBack, .forked: return
        }
    }

    /// Starts the epoch after this device's with `members`: their shares and the list in one
    /// transaction, written only where none of them is. False when another device started
    /// that epoch first.
    func startEpoch(_ state: inout SyncState, members: [SyncRecords.Member], client: EtcdClient) throws(SyncError) -> Bool {
        let epoch = state.epoch + 1
        let newKey = SecretBytes.random(count: 32)
        var writes: [(key: [UInt8], value: [UInt8], ifModRevision: Int64)] = []
        for member in members {
            let share = try SyncRecords.sealShare(newKey, epoch: epoch, to: member, previousKey: state.epochKey, prefix: state.prefix)
            writes.append((try SyncRecords.shareKey(state.prefix, epoch: epoch, device: member.deviceID, previousKey: state.epochKey), share, 0))
        }
        let sealed = try SyncRecords.sealMembers(members, epoch: epoch, key: newKey, prefix: state.prefix, signer: state)
        writes.append((SyncRecords.membersKey(state.prefix, epoch: epoch), sealed, 0))
        let written = try client.putAll(writes)
        guard written.succeeded else { return false }
        state.epochKeys[epoch] = newKey
        state.epoch = epoch
        state.members = sealed
        state.epochSince = written.revision
        state.retiredRecords = true
        if state.alarm?.kind == .forkedHistory { state.alarm = nil }
        try save(state)
        // Every item this device holds is sealed again under the new epoch and names (the
        // outbox: resumable, and idempotent by the clocks), then the old records go.
        try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() }
        return true
    }

    /// Removes a device (by the start of its id, or its name: names are unique in a group)
    /// from the group: a new group key goes to every other member, so it reads nothing
    /// written from now on, and what it writes is refused (it is no longer a member whose
    /// signature counts). Every item is then sealed again under the new key and names by the
    /// next rounds, and the old records deleted. A write another device makes meanwhile is
    /// refused by etcd (it compares that no list of the new epoch exists) and sealed again.
    ///
    /// - Throws: ``SyncError/invalidArgument(_:)`` when no member, or more than one, matches;
    ///   ``SyncError/forked`` when this device's history is forked.
    public func removeDevice(_ which: String) throws(SyncError) {
        try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) in
            var state = try state()
            let client = try EtcdClient(state.cluster)
            for _ in 0..<16 {
                try refreshMembership(&state, client: client)
                var members = try heldMembers(state)
                let matches = members.filter { Digest.hex($0.deviceID).hasPrefix(which.lowercased()) || $0.name == which }
                guard matches.count == 1, let removed = matches.first else {
                    throw .invalidArgument(matches.isEmpty ? "no device of the group is '\(which)'" : "'\(which)' names \(matches.count) devices; give more of the id")
                }
                guard removed.deviceID != state.deviceID else { throw .invalidArgument("a device cannot remove itself; use 'keychain sync leave'") }
                members.removeAll { $0.deviceID == removed.deviceID }
                if try startEpoch(&state, members: members, client: client) { return }
            }
            throw .unreachable("the member list kept changing")
        }
    }

    /// Resolves a fork in favour of this device's history: a new epoch from the member list
    /// it holds, its key shared with those members only. Devices of this history follow it;
    /// a device that followed the other history cannot open its share, and joins again
    /// (`keychain sync leave`, then `join` with an invitation from this side).
    ///
    /// - Throws: ``SyncError/invalidArgument(_:)`` when there is no fork to resolve.
    public func resolveFork() throws(SyncError) {
        try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) in
            var state = try state()
            guard state.alarm?.kind == .forkedHistory else { throw .invalidArgument("this device has met no forked history; there is nothing to resolve") }
            let client = try EtcdClient(state.cluster)
            guard try startEpoch(&state, members: try heldMembers(state), client: client) else {
                throw .tampered("a list of epoch \(state.epoch + 1) already exists; this history cannot continue there")
            }
        }
    }

    /// The membership alarm this device holds, read from the vault alone (no network): a
    /// fork or a removal means nothing written here travels.
    public func membershipAlarm() throws(SyncError) -> SyncMembershipAlarm? { try state().alarm }
}
