import Dispatch
import FoundationEssentials
internal import KeychainSystem
import Synchronization

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
public final class SyncEngine: Sendable {
    let vault: Vault
    /// What this engine remembers of etcd; its lock also makes rounds run one at a time.
    let revisions = VisibleMutex(SyncRevisions())
    /// The batch signatures this engine has checked.
    let verified = BatchSignature.Verified()
    /// Whether this engine neither signs nor checks signatures (the benchmark's baseline only).
    let withoutSignatures: Bool
    /// When this engine was made or last sent or applied a change, in milliseconds since 1970.
    let lastExchangeMilliseconds = Mutex(SyncChange.nowMilliseconds())

    /// The engine of `vault`, which must be enrolled (``create(vault:cluster:deviceName:)``,
    /// ``join(vault:cluster:code:deviceName:)``).
    ///
    /// - Throws: ``SyncError/notEnrolled``, or ``SyncError/store(_:)`` when the vault cannot be read.
    public convenience init(vault: Vault) throws(SyncError) {
        try self.init(vault: vault, withoutSignatures: false)
    }

    /// An engine that writes unsigned records and accepts any member's record unchecked: what
    /// sync cost before signatures, for `keychain-bench` to compare against. Never for use:
    /// it gives up the guarantee that a removed device cannot write.
    @_spi(Benchmark) public init(vault: Vault, withoutSignatures: Bool) throws(SyncError) {
        self.vault = vault
        self.withoutSignatures = withoutSignatures
        _ = try state()
    }

    // MARK: - Enrollment

    /// Starts a sync group with this vault as its first device: new group keys, the member
    /// list on the cluster, the vault's synchronizable items in the outbox.
    ///
    /// - Throws: ``SyncError/alreadyEnrolled``; ``SyncError/unreachable(_:)`` when no endpoint answers.
    public static func create(vault: Vault, cluster: SyncCluster, deviceName: String) throws(SyncError) -> SyncEngine {
        guard try onVault(vault, creating: true, { (open) throws(StoreError) in try open.readSyncState() }) == nil else { throw .alreadyEnrolled }
        var state = try newDevice(
            userID: Random.bytes(16), deviceName: deviceName, epochKeys: [1: SecretBytes.random(count: 32)], epoch: 1, cluster: cluster.configuration)
        let client = try EtcdClient(state.cluster)
        let sealed = try SyncRecords.sealMembers([SyncRecords.member(of: state)], epoch: 1, key: state.epochKey, prefix: state.prefix, signer: state)
        let written = try client.putAll([
            (SyncRecords.membersKey(state.prefix, epoch: 1), sealed, 0), (SyncRecords.headKey(state.prefix), SyncRecords.headValue(epoch: 1), 0),
        ])
        guard written.succeeded else { throw .malformed("a new group's member list already exists") }
        state.members = sealed
        state.epochSince = written.revision
        state.headRevision = written.revision
        do {
            try onVault(vault) { (open) throws(StoreError) in try open.enrollSync(device: state.deviceID, state: state.encoded()) }
        } catch {
            // A group this vault could not enroll in leaves nothing on etcd.
            _ = try? client.delete(SyncRecords.membersKey(state.prefix, epoch: 1), ifModRevision: written.revision)
            _ = try? client.delete(SyncRecords.headKey(state.prefix), ifModRevision: written.revision)
            throw error
        }
        return try SyncEngine(vault: vault)
    }

    /// Joins the sync group an existing device invited this vault into (``invite(validFor:)``):
    /// the group's keys come from the invitation, which the code opens and which is used up.
    /// The invitation's expiry and epoch are inside its seal: an expired one is refused
    /// whatever etcd still serves, and a member list older than the invitation's epoch (a
    /// rolled-back one, which would keep this device on a retired key) is refused.
    ///
    /// - Throws: ``SyncError/invalidInvitation(_:)`` for a code this program did not make,
    ///   ``SyncError/invitationNotFound`` for one used or from another cluster,
    ///   ``SyncError/invitationExpired`` for one past its expiry,
    ///   ``SyncError/tampered(_:)`` when what etcd holds does not open with it or was rolled back.
    public static func join(vault: Vault, cluster: SyncCluster, code: String, deviceName: String) throws(SyncError) -> SyncEngine {
        let invitation = try InvitationCode(parsing: code)
        guard try onVault(vault, creating: true, { (open) throws(StoreError) in try open.readSyncState() }) == nil else { throw .alreadyEnrolled }
        let client = try EtcdClient(cluster.configuration)
        let prefix = Array("/kc1/\(Digest.hex(invitation.userID))/".utf8)
        let invitationKey = SyncRecords.invitationKey(prefix, secret: invitation.secret)
        guard let sealed = try client.range(invitationKey).kvs.first else { throw .invitationNotFound }
        let group = try SyncRecords.openInvitation(sealed.value, secret: invitation.secret, prefix: prefix)
        guard group.expiry > SyncChange.nowMilliseconds() else { throw .invitationExpired }
        var state = try newDevice(
            userID: invitation.userID, deviceName: deviceName, epochKeys: [group.epoch: group.key], epoch: group.epoch, cluster: cluster.configuration)
        // Added to the member list by compare-and-swap: two devices joining at once both stay.
        var joined = false
        var before: (value: [UInt8], key: [UInt8], revision: Int64) = ([], [], 0)
        for _ in 0..<16 where !joined {
            let lists = try memberLists(prefix, client: client)
            guard let epoch = lists.keys.max(), let list = lists[epoch] else { throw .tampered("the group has no member list") }
            guard epoch >= group.epoch else {
                throw .tampered("the member list on etcd (epoch \(epoch)) is older than the invitation's (epoch \(group.epoch)): it was rolled back")
            }
            guard epoch == group.epoch else {
                throw .tampered("the member list is at a newer epoch than the invitation (a device was removed since): ask for a new invitation")
            }
            // The epoch head names the invitation's epoch (a group made before heads has none):
            // the join compares it, and every write of this device after it.
            let head = try epochHead(prefix, client: client)
            if let head, head.epoch > group.epoch {
                throw .tampered("the group's epoch head is at a newer epoch than the invitation (a device was removed since): ask for a new invitation")
            }
            if let head, head.epoch < group.epoch {
                throw .tampered("the group's epoch head on etcd (epoch \(head.epoch)) is older than the invitation's (epoch \(group.epoch)): it was rolled back")
            }
            var members = try SyncRecords.openMembers(list.value, key: group.key, prefix: prefix)
            // Names are unique in a group, so that remove-device works by name.
            guard !members.contains(where: { $0.name == deviceName }) else {
                throw .invalidArgument("a device named '\(deviceName)' is already in the group; give this one another --name")
            }
            members.append(SyncRecords.member(of: state))
            let updated = try SyncRecords.sealMembers(members, epoch: epoch, key: group.key, prefix: prefix, signer: state)
            let written = try client.put(
                SyncRecords.membersKey(prefix, epoch: epoch), updated, ifModRevision: list.modRevision,
                guards: [EtcdClient.Guard(key: SyncRecords.headKey(prefix), modRevision: head?.modRevision ?? 0)])
            if written.succeeded {
                state.members = updated
                state.epochSince = written.revision
                state.headRevision = head?.modRevision ?? 0
                before = (list.value, SyncRecords.membersKey(prefix, epoch: epoch), written.revision)
                joined = true
            }
        }
        guard joined else { throw .unreachable("the member list kept changing; nothing was joined, try again") }
        do {
            try onVault(vault) { (open) throws(StoreError) in try open.enrollSync(device: state.deviceID, state: state.encoded()) }
        } catch {
            // Not enrolled: the list goes back to what it was (unless another device joined
            // since), and the invitation stays usable.
            _ = try? client.put(before.key, before.value, ifModRevision: before.revision)
            throw error
        }
        // Used up only once this vault is enrolled.
        _ = try? client.delete(invitationKey)
        return try SyncEngine(vault: vault)
    }

    /// An invitation for another device to join this group: a code to give that device (never
    /// on a command line), valid once and for `seconds` (an hour by default, a day at most).
    /// The group's keys wait in etcd sealed under a secret only the code carries, with the
    /// expiry inside the seal.
    ///
    /// - Throws: ``SyncError/invalidArgument(_:)`` for a validity outside 1 s to a day;
    ///   ``SyncError/unreachable(_:)`` when no endpoint answers.
    public func invite(validFor seconds: Int = 3_600) throws(SyncError) -> String {
        guard (1...86_400).contains(seconds) else { throw .invalidArgument("an invitation is valid for 1 second to a day (86400 seconds)") }
        return try revisions.withLock { (revisions: inout sending SyncRevisions) throws(SyncError) -> String in
            var state = try state()
            let client = try EtcdClient(state.cluster)
            // An invitation carries this epoch's key: made only while this epoch is the group's
            // (a device that has not followed a removal would otherwise hand out the key the
            // removed device holds).
            try refreshMembership(&state, client: client)
            let secret = SecretBytes.random(count: 16)
            let expiry = SyncChange.nowMilliseconds() + UInt64(seconds) * 1_000
            // The lease only tidies etcd (at least a minute: etcd's shortest leases are cut short);
            // the expiry sealed inside is what a joining device believes.
            let lease = try client.grantLease(seconds: max(seconds, 60))
            let sealed = try SyncRecords.sealInvitation(state, secret: secret, expiry: expiry)
            let written = try client.put(
                SyncRecords.invitationKey(state.prefix, secret: secret), sealed, ifModRevision: 0, lease: lease, guards: Self.epochGuards(state))
            guard written.succeeded else {
                if try Self.epochMoved(state, client: client) { throw .unreachable("the group's epoch moved while the invitation was made; nothing was made, try again") }
                throw .malformed("an invitation with a new random secret already exists")
            }
            return InvitationCode(userID: state.userID, secret: secret).text
        }
    }

    /// Leaves the group: the vault's items stay, and travel no more.
    public func leave() throws(SyncError) {
        try Self.onVault(vault) { (open) throws(StoreError) in try open.leaveSync() }
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
            outbox: try outboxLength(), cursor: state.cursor, lastPull: state.lastPull, refused: Int(state.refused), alarm: state.alarm)
        (status.outboxItems, status.outboxLocked, status.outboxLockedChanges) = try Self.onVault(vault) { (open) throws(StoreError) in try open.outboxItems() }
        do throws(SyncError) {
            let client = try EtcdClient(state.cluster)
            let lists = try Self.memberLists(state.prefix, client: client)
            if let epoch = lists.keys.max(), let list = lists[epoch] {
                if let key = state.epochKeys[epoch] {
                    // A list that does not open with the key is another history's: no members to show.
                    status.members = ((try? SyncRecords.openMembers(list.value, key: key, prefix: state.prefix)) ?? []).map {
                        SyncStatus.Device(id: Digest.hex($0.deviceID), name: $0.name)
                    }
                } else if epoch > state.epoch, let next = lists[state.epoch + 1],
                    Self.headVouches(try Self.epochHead(state.prefix, client: client), for: state.epoch + 1, list: next)
                {
                    // A newer epoch, which the group's head vouches for, with no key sealed to
                    // this device: it was left out of it.
                    status.removed = try client.range(try SyncRecords.shareKey(state.prefix, epoch: state.epoch + 1, device: state.deviceID, previousKey: state.epochKey)).kvs
                        .isEmpty
                }
            }
            status.clusterRevision = try client.range(SyncRecords.membersPrefix(state.prefix)).revision
            if state.alarm?.kind == .removed { status.removed = true }
        } catch {
            status.clusterError = error.description
        }
        return status
    }

    // MARK: - Internals

    func state() throws(SyncError) -> SyncState {
        guard let sealed = try Self.onVault(vault, { (open) throws(StoreError) in try open.readSyncState() }) else { throw .notEnrolled }
        guard var state = SyncState.decode(sealed) else { throw .store(.corrupted("the vault's sync state does not decode")) }
        if state.signingPublicKey.isEmpty {
            // A state from before signatures: the device gets its signing key now (its group's
            // records, of the older format, are refused until the devices enroll again).
            let signing = try SyncRecords.crypto { () throws(OpenSSLError) in try Ed25519.generate() }
            state.signingKey = signing.privateKey
            state.signingPublicKey = signing.publicKey
            try save(state)
        }
        state.withoutSignatures = withoutSignatures
        return state
    }

    func save(_ state: SyncState) throws(SyncError) {
        try Self.onVault(vault) { (open) throws(StoreError) in try open.writeSyncState(state.encoded()) }
    }

    /// The state of a device new to a group: fresh X25519 and Ed25519 key pairs.
    private static func newDevice(
        userID: [UInt8], deviceName: String, epochKeys: [UInt32: SecretBytes], epoch: UInt32, cluster: EtcdClient.Configuration
    ) throws(SyncError) -> SyncState {
        let keys = try SyncRecords.crypto { () throws(OpenSSLError) in try X25519.generate() }
        let signing = try SyncRecords.crypto { () throws(OpenSSLError) in try Ed25519.generate() }
        return SyncState(
            userID: userID, deviceID: Random.bytes(16), deviceName: deviceName, privateKey: keys.privateKey, publicKey: keys.publicKey, epochKeys: epochKeys,
            epoch: epoch, cursor: 0, lastPull: 0, refused: 0, cluster: cluster, signingKey: signing.privateKey, signingPublicKey: signing.publicKey)
    }

    /// Runs `body` on the vault's journal (``JournaledVault``; the vault created first when `creating`: enrolling is a write),
    /// unlocking it with the configured passphrase when it is locked.
    static func onVault<R>(_ vault: Vault, creating: Bool = false, _ body: (any JournaledVault) throws(StoreError) -> R) throws(SyncError) -> R {
        do {
            return try vault.withJournal(creating: creating, body)
        } catch .noVault {
            throw .notEnrolled
        } catch {
            throw .store(error)
        }
    }

}
