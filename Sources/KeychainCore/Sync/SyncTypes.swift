/// Where a sync group's etcd cluster answers, and how to authenticate to it.
public struct SyncCluster: Sendable, Equatable {
    var configuration: EtcdClient.Configuration

    /// The cluster's client URLs (`http://127.0.0.1:2379`, `https://etcd1:2379`), tried in
    /// turn; `caFile` is the PEM file of a private CA to trust, `certFile` and `keyFile` the
    /// client certificate and key for a cluster that asks for one.
    public init(endpoints: [String], caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        configuration = EtcdClient.Configuration(endpoints: endpoints, caFile: caFile, certFile: certFile, keyFile: keyFile)
    }

    /// The endpoints, in the order they are tried.
    public var endpoints: [String] { configuration.endpoints }
}

/// What one sync round did.
public struct SyncRound: Sendable, Equatable {
    /// Changes from the outbox that etcd took.
    public var sent = 0
    /// Changes from other devices applied to this vault.
    public var received = 0
    /// Received changes older than what this vault had, not applied.
    public var superseded = 0
    /// Values etcd served that did not open with the group's keys (edited, moved between
    /// keys, forged), that no current member signed, that were sealed under a retired key
    /// after the removal, or that no device of the group makes: never applied.
    public var refused = 0
    /// A member list etcd served that this round refused and repaired (rolled back, or forked
    /// joins), or nil: a round that met one did less than asked.
    public var membershipAlarm: SyncMembershipAlarm.Kind?
}

/// A device's view of its sync group (``SyncEngine/status()``).
public struct SyncStatus: Sendable {
    /// A member of the group.
    public struct Device: Sendable, Equatable {
        /// The device's id, in hex.
        public var id: String
        /// The name it was enrolled with.
        public var name: String
    }

    /// The cluster's endpoints.
    public var endpoints: [String]
    /// This device's id, in hex.
    public var deviceID: String
    /// This device's name.
    public var deviceName: String
    /// The group key's epoch (one more for each device removed).
    public var epoch: UInt32
    /// Changes waiting to be sent.
    public var outbox: Int
    /// The items those changes are of (all the rows of one item `keychain serve` keeps are
    /// one item, and leave together).
    public var outboxItems = 0
    /// The items of the outbox that wait for the vault to be unlocked: a version of an item
    /// leaves whole or not at all, and a locked vault cannot open a whenUnlocked value to
    /// seal it for the group. They leave at the first round after the unlock.
    public var outboxLocked = 0
    /// The changes of those items (part of ``outbox``).
    public var outboxLockedChanges = 0
    /// The cluster revision up to which this device has applied every change.
    public var cursor: Int64
    /// When the last complete pull ended, in milliseconds since 1970 (0: never).
    public var lastPull: UInt64
    /// How many values from etcd were refused since enrollment.
    public var refused: Int
    /// The last member list etcd served that this device refused (rolled back or forked), or
    /// nil when there has been none.
    public var alarm: SyncMembershipAlarm?
    /// Whether the cluster's member list is at an epoch this device was given no key of: it
    /// was removed from the group (then ``members`` is empty).
    public var removed = false
    /// The group's members, as the member list on the cluster says (empty when unreachable
    /// or removed).
    public var members: [Device] = []
    /// The cluster's revision now; nil when it did not answer.
    public var clusterRevision: Int64?
    /// Why the cluster did not answer.
    public var clusterError: String?
}
