/// The records a sync group keeps in etcd, and how each is sealed. etcd sees the user id,
/// HMAC-named keys, epoch numbers, padded sizes, which records came in one batch, and timing;
/// no service, account, access group, value, device id, device name or public key.
///
/// Layout under the group's prefix `/kc1/<user id>/`:
/// - `i/<HMAC(naming key of the epoch, class || identity)>`: an item, signed by the device
///   that wrote it (named inside the seal), one signature per batch
///   (``SyncRecords/sealItems(_:state:)``); the naming key is derived from the epoch's group
///   key, so a removal renames every item;
/// - `m/<epoch in hex>`: the member list of each epoch (``SyncRecords/sealMembers(_:epoch:key:prefix:signer:)``),
///   written only where none is, each member with its X25519 and Ed25519 public keys;
/// - `k/<epoch>/<HMAC(previous epoch's key, device id)>`: the group key of a new epoch sealed
///   to one member's X25519 key and tagged under the previous epoch's key, so the server
///   cannot make one;
/// - `j/<SHA-256 of the invitation secret>`: an invitation, sealed under a key derived from
///   the secret that only the code carries, with its expiry inside the seal (the lease it is
///   put under only tidies etcd: a hostile etcd may keep it).
enum SyncRecords {
    struct Member: Sendable, Equatable {
        var deviceID: [UInt8]
        /// X25519: new group keys are sealed to it.
        var publicKey: [UInt8]
        /// Ed25519: what the member writes is signed with its private key.
        var signingKey: [UInt8]
        var name: String
    }

    /// The entry of the device `state` describes.
    static func member(of state: SyncState) -> Member {
        Member(deviceID: state.deviceID, publicKey: state.publicKey, signingKey: state.signingPublicKey, name: state.deviceName)
    }

    /// The format of member lists and invitations. Records of another format are refused
    /// (they do not open: the format is in every key derivation), never misread; a group of
    /// format 2 (its one member list at `m`) is refused with a word to enroll again.
    static let format: UInt8 = 3

    // MARK: - Keys in etcd

    /// Where `change` lives in etcd under the naming key of `epoch` (default: the current one).
    static func itemKey(_ change: SyncChange, state: SyncState, epoch: UInt32? = nil) throws(SyncError) -> [UInt8] {
        guard let epochKey = state.epochKeys[epoch ?? state.epoch] else { throw .tampered("an epoch this device holds no key of") }
        let naming = HMACKey(try derive(epochKey, "item names"))
        let tag = naming.authenticationCode([change.itemClass.code] + RecordCoding.identityMessage(change.itemClass, change.attributes))
        return state.prefix + Array("i/\(Digest.hex(tag))".utf8)
    }

    static func itemsPrefix(_ state: SyncState) -> [UInt8] { state.prefix + Array("i/".utf8) }
    /// Where the member list of `epoch` lives: one key per epoch, written only where none is
    /// (a list is never overwritten by a new epoch's), updated by compare-and-swap for joins.
    static func membersKey(_ prefix: [UInt8], epoch: UInt32) -> [UInt8] {
        prefix + Array("m/".utf8) + Array(Digest.hex([UInt8](bigEndian: epoch)).utf8)
    }
    static func membersPrefix(_ prefix: [UInt8]) -> [UInt8] { prefix + Array("m/".utf8) }
    /// Where the group's epoch head lives: the number of its newest epoch, put in the same
    /// transaction as that epoch's list. Every write compares the head's revision, so a
    /// device that has not followed a new epoch writes nothing under the one before, even
    /// when the new epoch's list was deleted before it looked.
    static func headKey(_ prefix: [UInt8]) -> [UInt8] { prefix + Array("e".utf8) }
    static func headValue(epoch: UInt32) -> [UInt8] { Array(String(epoch).utf8) }
    /// The epoch a head names; nil when it is not a number (written by no device of ours).
    static func headEpoch(_ value: [UInt8]) -> UInt32? {
        guard (1...10).contains(value.count), value.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt32(String(decoding: value, as: UTF8.self))
    }
    /// Where sync format 2 kept its one member list: a group there is of an older version.
    static func formerMembersKey(_ prefix: [UInt8]) -> [UInt8] { prefix + Array("m".utf8) }
    /// Where the key share of `epoch` for `device` lives: named by an HMAC of the device id
    /// under the previous epoch's key, so etcd does not learn which device a share is for.
    static func shareKey(_ prefix: [UInt8], epoch: UInt32, device: [UInt8], previousKey: SecretBytes) throws(SyncError) -> [UInt8] {
        let tag = HMACKey(try derive(previousKey, "share names")).authenticationCode(device)
        return prefix + Array("k/\(epoch)/\(Digest.hex(Array(tag.prefix(16))))".utf8)
    }
    static func invitationKey(_ prefix: [UInt8], secret: SecretBytes) -> [UInt8] {
        prefix + Array("j/\(Digest.hex(secret.withUnsafeBytes { Digest.sha256($0) }))".utf8)
    }

    // MARK: - Items

    /// The format of item records: signed by batch (``BatchSignature``), written only under
    /// an epoch confirmed current in the same transaction. Records of earlier formats are
    /// refused (counted in a round's refused values).
    static let itemFormat: UInt8 = 4

    /// The records of `changes`, each at its key, signed together:
    /// `format (1) || epoch (4) || AES-GCM(items key of the epoch, padded (signer (16) ||
    /// change)) || path to the batch's root || Ed25519 signature of the root (64)`. Each is
    /// bound to its etcd key and epoch (a value moved to another key, or relabelled, does not
    /// open), and the path and signature prove that the device that wrote it signed exactly
    /// this record at exactly this key. The signer is inside the seal: etcd does not learn
    /// which device wrote a record.
    static func sealItems(_ changes: [(change: SyncChange, key: [UInt8])], state: SyncState) throws(SyncError) -> [[UInt8]] {
        guard !changes.isEmpty else { return [] }
        let itemsKey = try derive(state.epochKey, "items")
        let header = [itemFormat] + [UInt8](bigEndian: state.epoch)
        var bodies: [[UInt8]] = []
        for (change, key) in changes {
            let encoded = change.encoded(withValue: true)
            let signed = SecretBytes(count: 16 + encoded.count) { buffer in
                buffer.copyBytes(from: state.deviceID)
                encoded.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[16...]).copyMemory(from: $0) }
            }
            let padded = signed.withUnsafeBytes { SizePadding.pad($0) }
            bodies.append(try crypto { () throws(OpenSSLError) in header + (try AESGCM.seal(padded, key: itemsKey, associatedData: key + header)) })
        }
        if state.withoutSignatures { return bodies.map { $0 + [0, 0] + [UInt8](repeating: 0, count: Ed25519.signatureSize) } }
        var records: [[UInt8]] = []
        for start in stride(from: 0, to: bodies.count, by: BatchSignature.batchSize) {
            let range = start..<min(start + BatchSignature.batchSize, bodies.count)
            let tree = BatchSignature.tree(range.map { BatchSignature.leaf(key: changes[$0].key, body: bodies[$0][...]) })
            let signature = try crypto { () throws(OpenSSLError) in try Ed25519.sign(BatchSignature.message(root: tree.root), privateKey: state.signingKey) }
            records += zip(range, tree.paths).map { bodies[$0] + BatchSignature.encode($1) + signature }
        }
        return records
    }

    /// An item record's epoch, readable without keys; nil when it is not of a format this
    /// version reads.
    static func itemHeader(_ value: [UInt8]) -> (epoch: UInt32, end: Int)? {
        guard value.count > headerSize + 2 + Ed25519.signatureSize, value[0] == itemFormat else { return nil }
        return (value[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, headerSize)
    }

    /// `format (1) || epoch (4)`.
    static let headerSize = 5

    /// The change a value holds and the epoch it was sealed under, or nil when it does not
    /// open with the group's keys or is not signed by one of `signers` (device id to Ed25519
    /// public key: the current members). `verified` remembers the batch signatures checked.
    static func openItem(
        _ value: [UInt8], at key: [UInt8], state: SyncState, signers: [[UInt8]: [UInt8]], verified: BatchSignature.Verified = .init()
    ) -> (change: SyncChange, epoch: UInt32)? {
        guard let claim = batchClaim(value, at: key, state: state, signers: signers) else { return nil }
        guard state.withoutSignatures || verified.isValid(claim.signature, root: claim.root, publicKey: claim.publicKey),
            let change = claim.plain.withUnsafeBytes({ SyncChange.decode(raw: UnsafeRawBufferPointer(rebasing: $0[16...])) })
        else { return nil }
        return (change, claim.epoch)
    }

    /// What a record claims: opened with the group's keys, the signer inside it one of
    /// `signers`, with the batch signature to check (once per batch, before the records are
    /// opened); nil when it does not open or its signer is no member.
    static func batchClaim(
        _ value: [UInt8], at key: [UInt8], state: SyncState, signers: [[UInt8]: [UInt8]]
    ) -> (publicKey: [UInt8], root: [UInt8], signature: [UInt8], plain: SecretBytes, epoch: UInt32)? {
        guard let header = itemHeader(value) else { return nil }
        let signed = value.count - Ed25519.signatureSize
        guard let (path, start) = BatchSignature.decode(value, end: signed), start > header.end,
            let epochKey = state.epochKeys[header.epoch], let itemsKey = try? derive(epochKey, "items"),
            let padded = try? AESGCM.open(Array(value[header.end..<start]), key: itemsKey, associatedData: key + Array(value[0..<header.end])),
            let plain = SizePadding.unpad(padded), plain.count > 16
        else { return nil }
        let signer = plain.withUnsafeBytes { Array($0.prefix(16)) }
        guard let signingKey = signers[signer] else { return nil }
        let root = BatchSignature.root(of: BatchSignature.leaf(key: key, body: value[..<start]), path: path)
        return (signingKey, root, Array(value[signed...]), plain, header.epoch)
    }

    /// The signing keys of the members in the list this device holds.
    static func signers(_ state: SyncState) -> [[UInt8]: [UInt8]] {
        guard let members = try? openMembers(state.members, key: state.epochKey, prefix: state.prefix) else { return [:] }
        return Dictionary(members.map { ($0.deviceID, $0.signingKey) }, uniquingKeysWith: { first, _ in first })
    }

    // MARK: - Shares of a new epoch

    static func sealShare(_ newKey: SecretBytes, epoch: UInt32, to member: Member, previousKey: SecretBytes, prefix: [UInt8]) throws(SyncError) -> [UInt8] {
        let path = try shareKey(prefix, epoch: epoch, device: member.deviceID, previousKey: previousKey)
        let sealed = try crypto { () throws(OpenSSLError) in try PresenceSeal.seal(newKey, to: member.publicKey, associatedData: path) }.withUnsafeBytes { Array($0) }
        return sealed + HMACKey(try derive(previousKey, "shares")).authenticationCode(path + sealed)
    }

    /// The new epoch's key, if the share is sealed to this device and tagged by a holder of the previous key.
    static func openShare(_ value: [UInt8], epoch: UInt32, state: SyncState, previousKey: SecretBytes) -> SecretBytes? {
        guard value.count > 32, let tagKey = try? derive(previousKey, "shares"),
            let path = try? shareKey(state.prefix, epoch: epoch, device: state.deviceID, previousKey: previousKey)
        else { return nil }
        let sealed = Array(value[..<(value.count - 32)])
        guard Digest.equal(HMACKey(tagKey).authenticationCode(path + sealed), Array(value[(value.count - 32)...])) else { return nil }
        guard let key = PresenceSeal.open(SecretBytes(sealed), privateKey: state.privateKey, publicKey: state.publicKey, associatedData: path), key.count == 32 else {
            return nil
        }
        return key
    }

    // MARK: - Invitations

    /// What an invitation carries, once opened with its code.
    struct Invitation {
        /// When it stops being valid, in milliseconds since 1970: checked by the joining
        /// device itself, whatever etcd still serves.
        var expiry: UInt64
        /// The inviter's epoch: a member list older than this is a rolled-back one.
        var epoch: UInt32
        /// The group key of `epoch`, and no older one: a new device opens only what is sealed now.
        var key: SecretBytes
    }

    /// An invitation: `format (1) || expiry (8) || epoch (4) || group key of the epoch (32)`,
    /// sealed under a key derived from the invitation secret, bound to its etcd key.
    static func sealInvitation(_ state: SyncState, secret: SecretBytes, expiry: UInt64) throws(SyncError) -> [UInt8] {
        var plain: [UInt8] = [format] + [UInt8](bigEndian: expiry) + [UInt8](bigEndian: state.epoch)
        state.epochKey.withUnsafeBytes { plain += $0 }
        defer { for index in plain.indices { plain[index] = 0 } }
        let sealingKey = try derive(secret, "invitation \(format)")
        return try crypto { () throws(OpenSSLError) in try AESGCM.seal(SecretBytes(plain), key: sealingKey, associatedData: invitationKey(state.prefix, secret: secret)) }
    }

    static func openInvitation(_ value: [UInt8], secret: SecretBytes, prefix: [UInt8]) throws(SyncError) -> Invitation {
        guard let key = try? derive(secret, "invitation \(format)"),
            let plain = try? AESGCM.open(value, key: key, associatedData: invitationKey(prefix, secret: secret))
        else {
            throw .tampered("the invitation does not open with its code (or was made by an older version of keychain)")
        }
        let opened = plain.withUnsafeBytes { raw -> Invitation? in
            var reader = ByteReader(raw)
            guard reader.u8() == format, let expiry = reader.take(8), let epoch = reader.u32(), let key = reader.take(32), reader.remaining == 0 else {
                return nil
            }
            return Invitation(expiry: expiry.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, epoch: epoch, key: SecretBytes(key))
        }
        guard let opened else { throw .tampered("the invitation is malformed") }
        return opened
    }

    // MARK: -

    /// Runs OpenSSL work, its failure reported as the vault reports one.
    static func crypto<R>(_ body: () throws(OpenSSLError) -> R) throws(SyncError) -> R {
        do { return try StoreError.fromOpenSSL(body) } catch { throw .store(error) }
    }

    static func derive(_ key: SecretBytes, _ purpose: String) throws(SyncError) -> SecretBytes {
        return try crypto { () throws(OpenSSLError) in try HKDF.deriveKey(from: key, info: "swift-keychain sync \(purpose) v1") }
    }
}
