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
    /// (``resolveFork(excluding:)``), or it follows a newer epoch that extends its own list.
    func refreshMembership(_ state: inout SyncState, client: EtcdClient) throws(SyncError) {
        // The head first: an epoch started after this read shows in the lists, never the reverse.
        let head = try Self.epochHead(state.prefix, client: client)
        let lists = try Self.memberLists(state.prefix, client: client)
        let held = try heldMembers(state)
        guard let newest = lists.keys.max() else {
            // A cluster that lost the lists (wiped): the held one goes back, with its shares.
            try putBackHeldList(state, held: held, client: client)
            try confirmHead(head, listCreated: nil, &state, client: client)
            return
        }
        if newest > state.epoch {
            try follow(lists, to: newest, head: head, held: held, &state, client: client)
            if state.headRevision != head?.modRevision { try confirmHead(head, listCreated: lists[state.epoch]?.createRevision, &state, client: client) }
            return
        }
        if Self.headUnconfirmed(head, state) { try confirmHead(head, listCreated: lists[state.epoch]?.createRevision, &state, client: client) }
        guard let current = lists[state.epoch] else {
            // This epoch's list is gone and an older one is the newest: rolled back. The list
            // goes back with its members' key shares, so a device that had not yet followed it
            // can follow it now.
            try putBackHeldList(state, held: held, client: client)
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
        try putBackMissingShares(state, members: served.members, client: client)
        if state.members != current.value {
            state.members = current.value
            try save(state)
        }
    }

    /// The group's epoch head as etcd holds it: the epoch it names and its revision.
    struct EpochHead {
        var epoch: UInt32
        var modRevision: Int64
    }

    /// Whether `head` vouches for the epoch `number` whose list is `list`: it moved past it, or
    /// moved to it in the transaction that wrote the list (an epoch's start). A group made
    /// before heads has none to ask, and every list is taken at its word there.
    static func headVouches(_ head: EpochHead?, for number: UInt32, list: EtcdClient.KeyValue) -> Bool {
        guard let head else { return true }
        return head.epoch > number || (head.epoch == number && head.modRevision == list.createRevision)
    }

    /// Whether `head` is not the one `state` confirmed: it names another epoch than this
    /// device's (a newer one whose list is gone, an older one, none: rewritten), or moved.
    static func headUnconfirmed(_ head: EpochHead?, _ state: SyncState) -> Bool {
        head?.epoch != state.epoch || head?.modRevision != state.headRevision
    }

    /// The head as etcd holds it; one that is not a number (no device of ours wrote it) names
    /// epoch 0, which no group has, and is put back like any head that names the wrong epoch.
    static func epochHead(_ prefix: [UInt8], client: EtcdClient) throws(SyncError) -> EpochHead? {
        guard let kv = try client.range(SyncRecords.headKey(prefix)).kvs.first else { return nil }
        return EpochHead(epoch: SyncRecords.headEpoch(kv.value) ?? 0, modRevision: kv.modRevision)
    }

    /// Takes a head that names this device's epoch but is not the one it confirmed, or puts
    /// back one that names another epoch (a newer one whose list is gone, an older one, none),
    /// once etcd's history says that no list of the next epoch was written since this device
    /// learned its epoch: a newer list written and deleted means a newer epoch existed (a
    /// removal, perhaps), and whoever deleted it may be the removed device, which holds this
    /// epoch's key. A head put in the same transaction as this epoch's list (`listCreated`) is
    /// the epoch's start, and taken as it is. A history compacted away cannot say, and then
    /// nothing is taken, except by a device of a group made before heads that never confirmed
    /// one: it takes the group's first head as it took lists before. A cluster whose revisions
    /// are behind this device's epoch was wiped or replaced: its whole history is read.
    private func confirmHead(_ head: EpochHead?, listCreated: Int64?, _ state: inout SyncState, client: EtcdClient) throws(SyncError) {
        if let head, head.epoch == state.epoch, head.modRevision == listCreated {
            state.headRevision = head.modRevision
            return try save(state)
        }
        let next = Self.nextEpochKey(state)
        let clusterRevision = try client.range(next).revision
        let from = state.epochSince > clusterRevision ? 1 : max(1, state.epochSince)
        if let puts = try client.history(of: next, from: from, through: .max, idleSeconds: 1) {
            guard puts.isEmpty else {
                throw .tampered(
                    "a member list of epoch \(state.epoch + 1) was written on etcd and then deleted; nothing is sent under epoch \(state.epoch), which a removed device may hold (the next round of a member that followed epoch \(state.epoch + 1) puts it back, then this device follows it)"
                )
            }
        } else if state.headRevision != 0 || (head.map { $0.epoch != state.epoch } ?? false) {
            throw .tampered(
                "the group's epoch head moved, and etcd's history since this device learned epoch \(state.epoch) was compacted, so it cannot confirm that no list of epoch \(state.epoch + 1) was written and deleted; nothing is sent under epoch \(state.epoch) (a member that follows the newest epoch repairs a deleted list; or leave and join again)"
            )
        }
        if let head, head.epoch == state.epoch {
            state.headRevision = head.modRevision
            return try save(state)
        }
        let written = try client.put(SyncRecords.headKey(state.prefix), SyncRecords.headValue(epoch: state.epoch), ifModRevision: head?.modRevision ?? 0)
        guard written.succeeded else { return }
        state.headRevision = written.revision
        // A head that was there and named another epoch was rewritten; one missing from a
        // group that never had one (made before heads) was not.
        if head != nil { return try raise(.rolledBack, servedEpoch: head?.epoch ?? state.epoch, &state) }
        try save(state)
    }

    /// Puts back a key share of this epoch missing for one of `members` (deleted: a device that
    /// has not followed the epoch could not), sealed anew to the same key; one keys-only read.
    private func putBackMissingShares(_ state: SyncState, members: [SyncRecords.Member], client: EtcdClient) throws(SyncError) {
        guard state.epoch > 1, let previousKey = state.epochKeys[state.epoch - 1] else { return }
        let prefix = state.prefix + Array("k/\(state.epoch)/".utf8)
        let present = Set(try client.keys(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix), keysOnly: true).keys)
        for member in members {
            let key = try SyncRecords.shareKey(state.prefix, epoch: state.epoch, device: member.deviceID, previousKey: previousKey)
            guard !present.contains(key) else { continue }
            let share = try SyncRecords.sealShare(state.epochKey, epoch: state.epoch, to: member, previousKey: previousKey, prefix: state.prefix)
            _ = try client.put(key, share, ifModRevision: 0)
        }
    }

    /// Puts the held list of this device's epoch back where none is, and a key share for each
    /// of its members where none is (sealed anew: each opens to the same key), so that a device
    /// that had not followed this epoch when they were deleted can follow it.
    private func putBackHeldList(_ state: SyncState, held: [SyncRecords.Member], client: EtcdClient) throws(SyncError) {
        guard !state.members.isEmpty else { return }
        _ = try client.put(SyncRecords.membersKey(state.prefix, epoch: state.epoch), state.members, ifModRevision: 0)
        guard state.epoch > 1, let previousKey = state.epochKeys[state.epoch - 1] else { return }
        for member in held {
            let share = try SyncRecords.sealShare(state.epochKey, epoch: state.epoch, to: member, previousKey: previousKey, prefix: state.prefix)
            let key = try SyncRecords.shareKey(state.prefix, epoch: state.epoch, device: member.deviceID, previousKey: previousKey)
            _ = try client.put(key, share, ifModRevision: 0)
        }
    }

    /// The members of the list this device holds (itself alone before it holds one).
    func heldMembers(_ state: SyncState) throws(SyncError) -> [SyncRecords.Member] {
        guard !state.members.isEmpty else { return [SyncRecords.member(of: state)] }
        return try SyncRecords.openMembers(state.members, key: state.epochKey, prefix: state.prefix)
    }

    /// Moves from this device's epoch to `newest`, one link of the chain at a time.
    private func follow(
        _ lists: [UInt32: EtcdClient.KeyValue], to newest: UInt32, head: EpochHead?, held: [SyncRecords.Member], _ state: inout SyncState, client: EtcdClient
    ) throws(SyncError) {
        var next = state
        var previous = held
        for number in (state.epoch + 1)...newest {
            guard let kv = lists[number] else { throw .tampered("the member list of epoch \(number) is missing while a newer one exists") }
            let shareKey = try SyncRecords.shareKey(state.prefix, epoch: number, device: state.deviceID, previousKey: next.epochKey)
            guard let share = try client.range(shareKey).kvs.first else {
                // A share of this device's that was there and is gone was deleted, not withheld:
                // tampering, tried again next round (a member's repair puts it back).
                if let puts = try client.history(of: shareKey, from: max(1, next.epochSince), through: .max, idleSeconds: 1), !puts.isEmpty {
                    throw .tampered("this device's key share of epoch \(number) was deleted from etcd; it follows that epoch once a member puts the share back")
                }
                // Removed only when the group's head vouches for the epoch: it moved past it, or
                // moved to it in the transaction that wrote the list (a group made before heads
                // has none to ask). A list no epoch start wrote says nothing about this device.
                guard Self.headVouches(head, for: number, list: kv) else {
                    throw .tampered("a member list of epoch \(number) is on etcd with no key share for this device, and the group's epoch head does not vouch for it")
                }
                return try raise(.removed, servedEpoch: number, &state)
            }
            guard let key = SyncRecords.openShare(share.value, epoch: number, state: next, previousKey: next.epochKey) else {
                // Tagged under another key of the epoch before: made in another history.
                return try raise(.forkedHistory, servedEpoch: number, &state)
            }
            guard let list = try? SyncRecords.openMemberList(kv.value, key: key, prefix: state.prefix) else {
                return try raise(.forkedHistory, servedEpoch: number, &state)
            }
            let puts = try client.history(of: kv.key, from: min(next.epochSince, kv.createRevision), through: kv.modRevision)
            guard !Self.replacedAnother(kv, puts: puts), Self.extendsChain(list, previous: previous, puts: puts, key: key, prefix: state.prefix) else {
                return try raise(.forkedHistory, servedEpoch: number, &state)
            }
            guard list.members.contains(where: { $0.deviceID == state.deviceID }) else { return try raise(.removed, servedEpoch: number, &state) }
            next.epochKeys[number] = key
            next.epoch = number
            next.members = kv.value
            // From the list's first put: one put back since (a member's repair) does not hide
            // what etcd's history holds between the two.
            next.epochSince = min(kv.createRevision, puts?.first?.modRevision ?? kv.createRevision)
            previous = list.members
        }
        // The head put with the newest list, in its start's transaction, is the one every write
        // now compares; any other is confirmed against etcd's history by the caller.
        if let head, head.epoch == newest, head.modRevision == lists[newest]?.createRevision { next.headRevision = head.modRevision }
        next.retiredRecords = true
        if next.alarm?.kind == .forkedHistory || next.alarm?.kind == .removed { next.alarm = nil }
        state = next
        try save(state)
        // Everything this device holds is sealed again under the new epoch and names.
        try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() }
    }

    /// Whether the list at `kv`'s key was written where another had been (deleted, then
    /// written again with other contents): the first list of an epoch is the one the group's
    /// members made, and the same list put back (a member's repair) is the same history.
    /// A history compacted away (`puts` nil) cannot tell; what a device can and cannot see
    /// then is in the security model.
    private static func replacedAnother(_ kv: EtcdClient.KeyValue, puts: [EtcdClient.KeyValue]?) -> Bool {
        (puts ?? []).contains { $0.createRevision != kv.createRevision && $0.value != kv.value }
    }

    /// Whether `list`, of the epoch after `previous`'s, continues the chain: signed by one of
    /// `previous` and naming only them, as the epoch's start wrote it; or, when devices joined
    /// the new epoch since it started, signed by one of its own members and naming every
    /// member of the list the start wrote (its first put in `puts`, etcd's history of the key),
    /// which itself continues the chain. A history compacted away cannot show the start, and
    /// a list with joins is then taken for another history's.
    private static func extendsChain(
        _ list: SyncRecords.MemberList, previous: [SyncRecords.Member], puts: [EtcdClient.KeyValue]?, key: SecretBytes, prefix: [UInt8]
    ) -> Bool {
        func startsEpoch(_ list: SyncRecords.MemberList) -> Bool {
            list.isSigned(byOneOf: previous) && list.members.allSatisfy { member in previous.contains(member) }
        }
        if startsEpoch(list) { return true }
        guard list.isSigned(byOneOf: list.members), let first = puts?.first,
            let start = try? SyncRecords.openMemberList(first.value, key: key, prefix: prefix), startsEpoch(start)
        else { return false }
        return start.members.allSatisfy { member in list.members.contains(member) }
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

    /// Starts the epoch after this device's with `members`: their shares, the list and the
    /// epoch head in one transaction, written only where none of them is and while the head
    /// is the one this device confirmed. False when another device started that epoch first,
    /// or the head moved.
    func startEpoch(_ state: inout SyncState, members: [SyncRecords.Member], client: EtcdClient, guards: [EtcdClient.Guard] = []) throws(SyncError) -> Bool {
        let epoch = state.epoch + 1
        let newKey = SecretBytes.random(count: 32)
        var writes: [(key: [UInt8], value: [UInt8], ifModRevision: Int64)] = []
        for member in members {
            let share = try SyncRecords.sealShare(newKey, epoch: epoch, to: member, previousKey: state.epochKey, prefix: state.prefix)
            writes.append((try SyncRecords.shareKey(state.prefix, epoch: epoch, device: member.deviceID, previousKey: state.epochKey), share, 0))
        }
        let sealed = try SyncRecords.sealMembers(members, epoch: epoch, key: newKey, prefix: state.prefix, signer: state)
        writes.append((SyncRecords.membersKey(state.prefix, epoch: epoch), sealed, 0))
        writes.append((SyncRecords.headKey(state.prefix), SyncRecords.headValue(epoch: epoch), state.headRevision))
        let written = try client.putAll(writes, guards: guards)
        guard written.succeeded else { return false }
        state.epochKeys[epoch] = newKey
        state.epoch = epoch
        state.members = sealed
        state.epochSince = written.revision
        state.headRevision = written.revision
        state.retiredRecords = true
        if state.alarm?.kind == .forkedHistory { state.alarm = nil }
        try save(state)
        // Every item this device holds is sealed again under the new epoch and names (the
        // outbox: resumable, and idempotent by the clocks), then the old records go.
        try Self.onVault(vault) { (open) throws(StoreError) in try open.resendAll() }
        return true
    }

    /// The member `which` names: the one of that name (names are unique in a group), else the
    /// one whose id starts with it. `place` names the list in the error.
    ///
    /// - Throws: ``SyncError/invalidArgument(_:)`` when no member matches, or more than one id.
    static func member(_ which: String, of members: [SyncRecords.Member], _ place: String) throws(SyncError) -> SyncRecords.Member {
        if let named = members.first(where: { $0.name == which }) { return named }
        let matches = members.filter { Digest.hex($0.deviceID).hasPrefix(which.lowercased()) }
        guard matches.count == 1, let match = matches.first else {
            throw .invalidArgument(matches.isEmpty ? "no device of \(place) is '\(which)'" : "'\(which)' names \(matches.count) devices; give more of the id")
        }
        return match
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
                let removed = try Self.member(which, of: members, "the group")
                guard removed.deviceID != state.deviceID else { throw .invalidArgument("a device cannot remove itself; use 'keychain sync leave'") }
                members.removeAll { $0.deviceID == removed.deviceID }
                // Only over the list as read: a device that joins meanwhile is kept (the
                // transaction fails, and the list is read again).
                let listKey = SyncRecords.membersKey(state.prefix, epoch: state.epoch)
                guard let current = try client.range(listKey).kvs.first, current.value == state.members else { continue }
                if try startEpoch(&state, members: members, client: client, guards: [EtcdClient.Guard(key: listKey, modRevision: current.modRevision)]) { return }
            }
            throw .unreachable("the member list kept changing")
        }
    }

    /// Resolves a fork in favour of this device's history: a new epoch from the member list
    /// it holds, less the devices `excluded` names (each by the start of its id or its name),
    /// its key shared with those members only. Devices of this history follow it; a device
    /// that followed the other history cannot open its share, and joins again
    /// (`keychain sync leave`, then `join` with an invitation from this side).
    ///
    /// Refused on a device that has not followed the group's newest epoch (the epoch head
    /// names a newer one, or etcd's history shows a list of the next epoch written and
    /// deleted): its held list may still name a device removed there, which would get the new
    /// key. Resolve then on a device that followed that epoch, or leave and join again.
    ///
    /// - Returns: the names of the members the new key went to.
    /// - Throws: ``SyncError/invalidArgument(_:)`` when there is no fork to resolve, or a
    ///   name in `excluded` matches no member, or more than one, or this device;
    ///   ``SyncError/tampered(_:)`` when a newer epoch exists, or existed, that this device
    ///   did not follow.
    @discardableResult
    public func resolveFork(excluding excluded: [String] = []) throws(SyncError) -> [String] {
        try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) -> [String] in
            var state = try state()
            guard state.alarm?.kind == .forkedHistory else { throw .invalidArgument("this device has met no forked history; there is nothing to resolve") }
            var members = try heldMembers(state)
            for which in excluded {
                let dropped = try Self.member(which, of: members, "this device's list")
                guard dropped.deviceID != state.deviceID else { throw .invalidArgument("a device cannot exclude itself") }
                members.removeAll { $0.deviceID == dropped.deviceID }
            }
            let client = try EtcdClient(state.cluster)
            let head = try Self.epochHead(state.prefix, client: client)
            if let head, head.epoch > state.epoch {
                throw .tampered(
                    "the group's epoch head names epoch \(head.epoch), which this device never followed (a device may have been removed there): resolving from this device's list could give a removed device the new key. Resolve on a device that followed epoch \(head.epoch), or leave ('keychain sync leave') and join again"
                )
            }
            if Self.headUnconfirmed(head, state) {
                let listCreated = try client.range(SyncRecords.membersKey(state.prefix, epoch: state.epoch)).kvs.first?.createRevision
                try confirmHead(head, listCreated: listCreated, &state, client: client)
            }
            guard try startEpoch(&state, members: members, client: client) else {
                throw .tampered("a list of epoch \(state.epoch + 1) already exists, or the group's epoch head moved; this history cannot continue there")
            }
            return members.map(\.name)
        }
    }

    /// What a removed device with a client of its own can do on a cluster without
    /// authentication: start the epoch after the one it holds, from its held list less the
    /// device `name`, whatever the epoch head and etcd's history say (it moves the head
    /// itself). Only the reliability suite and the tests call it, to play that device.
    @_spi(Reliability) public func startEpochIgnoringTheGroup(removing name: String) throws(SyncError) {
        try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) in
            var state = try state()
            let client = try EtcdClient(state.cluster)
            state.headRevision = try client.range(SyncRecords.headKey(state.prefix)).kvs.first?.modRevision ?? 0
            var members = try heldMembers(state)
            members.removeAll { $0.name == name }
            guard try startEpoch(&state, members: members, client: client) else { throw .tampered("a list of epoch \(state.epoch + 1) exists") }
        }
    }

    /// The membership alarm this device holds, read from the vault alone (no network): a
    /// fork or a removal means nothing written here travels.
    public func membershipAlarm() throws(SyncError) -> SyncMembershipAlarm? { try state().alarm }
}
