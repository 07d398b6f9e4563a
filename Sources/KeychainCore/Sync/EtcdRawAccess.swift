/// Direct edits of a sync group's records through etcd's API, as a hostile etcd (or anyone
/// with write access to it) could make them: the reliability check's hostile-etcd trials
/// replay, move, drop and roll back records with it. Not API.
@_spi(Reliability) public struct EtcdRawAccess: Sendable {
    /// One record as etcd holds it.
    public struct Record: Sendable, Equatable {
        public var key: [UInt8]
        public var value: [UInt8]

        public init(key: [UInt8], value: [UInt8]) {
            self.key = key
            self.value = value
        }

        /// Whether it is a group's member list (else an item, a key share or an invitation).
        public var isMemberList: Bool { String(decoding: key, as: UTF8.self).contains("/m/") }
        /// Whether it is a new epoch's key share for one member.
        public var isKeyShare: Bool { String(decoding: key, as: UTF8.self).contains("/k/") }
        /// Whether it is an item record.
        public var isItem: Bool { String(decoding: key, as: UTF8.self).contains("/i/") }
        /// The epoch an item record or member list says it is sealed under (readable without keys).
        public var epoch: UInt32? { isItem ? SyncRecords.itemHeader(value)?.epoch : SyncRecords.membersEpoch(value) }
    }

    private let client: EtcdClient
    private static let prefix = Array("/kc1/".utf8)

    public init(_ cluster: SyncCluster) throws(SyncError) { client = try EtcdClient(cluster.configuration) }

    /// Every record of every sync group on the cluster.
    public func records() throws(SyncError) -> [Record] {
        try client.range(Self.prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: Self.prefix)).kvs.map { Record(key: $0.key, value: $0.value) }
    }

    /// Puts `record` back, whatever the key holds now.
    public func put(_ record: Record) throws(SyncError) { try client.put(record.key, record.value) }

    /// Deletes the record at `key`.
    public func delete(_ key: [UInt8]) throws(SyncError) { try client.delete(key) }
}
