/// What a device keeps about its sync group, sealed in its vault (``JournaledVault/readSyncState()``):
/// who it is, the group's keys, the member list it holds, where the cluster is and how far it
/// has read.
struct SyncState: Sendable {
    /// The random id of the user's group: the etcd prefix, never a name.
    var userID: [UInt8]
    var deviceID: [UInt8]
    var deviceName: String
    /// This device's X25519 key pair: new group keys are sealed to it when a device is removed.
    var privateKey: SecretBytes
    var publicKey: [UInt8]
    /// The group key of every epoch this device has held; the newest seals and names what it
    /// writes (item names are derived from it, so a removal renames every item).
    var epochKeys: [UInt32: SecretBytes]
    var epoch: UInt32
    /// The cluster revision up to which every change has been applied.
    var cursor: Int64
    /// Milliseconds since 1970 of the last complete pull (0: never).
    var lastPull: UInt64
    /// Values etcd served that were refused (edited, moved, forged, from no member, replayed
    /// under a retired key) since enrollment.
    var refused: UInt32
    var cluster: EtcdClient.Configuration
    /// This device's Ed25519 key pair: everything it writes carries its signature, checked
    /// against the member list by every other device. Empty until a state from before
    /// signatures is upgraded (``SyncEngine/state()``).
    var signingKey = SecretBytes([])
    var signingPublicKey: [UInt8] = []
    /// The newest member list this device accepted, sealed as etcd held it: written back when
    /// etcd serves an older one.
    var members: [UInt8] = []
    /// The cluster revision at which this device moved to its current epoch: a record sealed
    /// under an older epoch and written after it is refused.
    var epochSince: Int64 = 0
    /// Whether records under retired epochs may still be on etcd (removed once this device
    /// has sealed again everything it holds).
    var retiredRecords = false
    /// The last time etcd served a member list older than, or forked from, the one held.
    var alarm: SyncMembershipAlarm?
    /// The revision of the group's epoch head (``SyncRecords/headKey(_:)``) this device
    /// confirmed names its epoch (0: none yet). Every write compares it, so none goes in under
    /// this epoch once the head has moved, whoever then deleted what.
    var headRevision: Int64 = 0
    /// Never stored: set only by the benchmark's engine (``SyncEngine/init(vault:withoutSignatures:)``),
    /// which measures what sync costs without signing and checking signatures.
    var withoutSignatures = false

    var epochKey: SecretBytes { epochKeys[epoch]! }

    /// The etcd prefix of the group: `/kc1/<user id in hex>/`.
    var prefix: [UInt8] { Array("/kc1/\(Digest.hex(userID))/".utf8) }

    /// Version 2 adds the signing key, the held member list, the epoch's start and the alarm;
    /// version 3 the epoch head's revision. Version 1 is read (its naming key dropped: names
    /// now come from the epoch key), and version 2 (no head confirmed yet).
    static let version: UInt8 = 3

    func encoded() -> SecretBytes {
        var out: [UInt8] = [Self.version]
        func bytes(_ b: [UInt8]) {
            out += [UInt8](bigEndian: UInt32(b.count))
            out += b
        }
        func string(_ s: String?) { bytes(s.map { Array($0.utf8) } ?? [0xFF]) }
        bytes(userID)
        bytes(deviceID)
        string(deviceName)
        privateKey.withUnsafeBytes { bytes(Array($0)) }
        bytes(publicKey)
        signingKey.withUnsafeBytes { bytes(Array($0)) }
        bytes(signingPublicKey)
        out += [UInt8](bigEndian: epoch)
        out += [UInt8](bigEndian: UInt32(epochKeys.count))
        for (number, key) in epochKeys.sorted(by: { $0.key < $1.key }) {
            out += [UInt8](bigEndian: number)
            key.withUnsafeBytes { bytes(Array($0)) }
        }
        out += [UInt8](bigEndian: cursor)
        out += [UInt8](bigEndian: lastPull)
        out += [UInt8](bigEndian: refused)
        out += [UInt8](bigEndian: UInt32(cluster.endpoints.count))
        for endpoint in cluster.endpoints { string(endpoint) }
        string(cluster.caFile)
        string(cluster.certFile)
        string(cluster.keyFile)
        bytes(members)
        out += [UInt8](bigEndian: epochSince)
        out.append(retiredRecords ? 1 : 0)
        out += alarm?.encoded() ?? [0]
        out += [UInt8](bigEndian: headRevision)
        let result = SecretBytes(out)
        for index in out.indices { out[index] = 0 }
        return result
    }

    static func decode(_ sealed: SecretBytes) -> SyncState? {
        sealed.withUnsafeBytes { raw -> SyncState? in
            var reader = ByteReader(raw)
            func bytes() -> [UInt8]? { reader.u32().flatMap { reader.take(Int($0)) } }
            func string() -> String?? {
                guard let b = bytes() else { return nil }
                return .some(b == [0xFF] ? nil : String(decoding: b, as: UTF8.self))
            }
            func u64() -> UInt64? { reader.take(8).map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } } }
            guard let version = reader.u8(), (1...SyncState.version).contains(version), let user = bytes(), user.count == 16, let device = bytes(),
                device.count == 16, let name = string() ?? nil, let privateKey = bytes(), privateKey.count == 32, let publicKey = bytes(), publicKey.count == 32
            else { return nil }
            var signing: (SecretBytes, [UInt8]) = (SecretBytes([]), [])
            if version == 1 {
                guard let naming = bytes(), naming.count == 32 else { return nil }
            } else {
                // Empty: a key pair still to make (``SyncEngine/state()``).
                guard let key = bytes(), let publicKey = bytes(), key.count == publicKey.count, [0, Ed25519.keySize].contains(key.count) else { return nil }
                signing = (SecretBytes(key), publicKey)
            }
            guard let epoch = reader.u32(), let keyCount = reader.u32(), keyCount < 100_000 else { return nil }
            var keys: [UInt32: SecretBytes] = [:]
            for _ in 0..<keyCount {
                guard let number = reader.u32(), let key = bytes(), key.count == 32 else { return nil }
                keys[number] = SecretBytes(key)
            }
            guard keys[epoch] != nil, let cursor = u64(), let lastPull = u64(), let refused = reader.u32(), let endpointCount = reader.u32(),
                endpointCount < 1_000
            else { return nil }
            var endpoints: [String] = []
            for _ in 0..<endpointCount {
                guard let endpoint = string() ?? nil else { return nil }
                endpoints.append(endpoint)
            }
            guard let ca = string(), let cert = string(), let key = string() else { return nil }
            var state = SyncState(
                userID: user, deviceID: device, deviceName: name, privateKey: SecretBytes(privateKey), publicKey: publicKey, epochKeys: keys, epoch: epoch,
                cursor: max(0, Int64(bitPattern: cursor)), lastPull: lastPull, refused: refused,
                cluster: EtcdClient.Configuration(endpoints: endpoints, caFile: ca, certFile: cert, keyFile: key), signingKey: signing.0,
                signingPublicKey: signing.1)
            if version == 1 { return reader.remaining == 0 ? state : nil }
            guard let members = bytes(), let since = u64(), let retired = reader.u8(), retired <= 1, let alarm = SyncMembershipAlarm.decode(&reader)
            else { return nil }
            if version == 3 {
                guard let head = u64() else { return nil }
                state.headRevision = min(Int64(clamping: head), EtcdRevision.ceiling)
            }
            guard reader.remaining == 0 else { return nil }
            state.members = members
            state.epochSince = min(Int64(clamping: since), EtcdRevision.ceiling)
            state.retiredRecords = retired == 1
            state.alarm = alarm
            return state
        }
    }
}
