/// Member lists: one per epoch, at `m/<epoch>`, each sealed under its epoch's key, padded,
/// and signed by the device that wrote it. The lists form a chain each device checks before
/// it follows one: the list of a new epoch is written where none was (so no one overwrites a
/// list), names only members of the list before it, and is signed by one of them.
///
/// A stored list: `epoch (4) || AES-GCM(members key of the epoch, padded plain list) ||
/// Ed25519 signature (64)` of the key, the epoch and the ciphertext; the plain list is
/// `format (1) || signer id (16)`, then `device id (16) || X25519 key (32) || Ed25519 key (32)
/// || name length (1) || name`, repeated. etcd sees the epoch and a padded size: not the
/// signer, the member count or the names.
extension SyncRecords {
    /// A member list, opened with its epoch's key.
    struct MemberList {
        var epoch: UInt32
        var members: [Member]
        /// The device that wrote it.
        var signer: [UInt8]
        /// What the signature covers, and the signature.
        var signed: [UInt8]
        var signature: [UInt8]

        /// Whether one of `members` (by id) signed it with the signing key listed there.
        func isSigned(byOneOf members: [Member]) -> Bool {
            guard let writer = members.first(where: { $0.deviceID == signer }) else { return false }
            return Ed25519.isValid(signature, of: signed, publicKey: writer.signingKey)
        }
    }

    private static func listMessage(_ prefix: [UInt8], epoch: UInt32, ciphertext: [UInt8]) -> [UInt8] {
        Array("swift-keychain sync members v\(format)".utf8) + membersKey(prefix, epoch: epoch) + [UInt8](bigEndian: epoch) + ciphertext
    }

    /// `members` as the list of `epoch`, sealed under `key` and signed by the device `signer` describes.
    static func sealMembers(_ members: [Member], epoch: UInt32, key: SecretBytes, prefix: [UInt8], signer: SyncState) throws(SyncError) -> [UInt8] {
        var plain: [UInt8] = [format] + signer.deviceID
        for member in members {
            plain += member.deviceID + member.publicKey + member.signingKey
            let name = Array(member.name.utf8.prefix(255))
            plain.append(UInt8(name.count))
            plain += name
        }
        let padded = plain.withUnsafeBytes { SizePadding.pad($0) }
        for index in plain.indices { plain[index] = 0 }
        let header = [UInt8](bigEndian: epoch)
        let sealingKey = try derive(key, "members \(format)")
        let ciphertext = try crypto { () throws(OpenSSLError) in try AESGCM.seal(padded, key: sealingKey, associatedData: membersKey(prefix, epoch: epoch) + header) }
        let signature = try crypto { () throws(OpenSSLError) in
            try Ed25519.sign(listMessage(prefix, epoch: epoch, ciphertext: ciphertext), privateKey: signer.signingKey)
        }
        return header + ciphertext + signature
    }

    /// The epoch a member list is at (readable without keys).
    static func membersEpoch(_ value: [UInt8]) -> UInt32? {
        guard value.count >= 4 else { return nil }
        return value[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The list `value` holds, opened with its epoch's `key`; its signature is checked by the
    /// caller against the members it trusts (``MemberList/isSigned(byOneOf:)``).
    static func openMemberList(_ value: [UInt8], key: SecretBytes, prefix: [UInt8]) throws(SyncError) -> MemberList {
        guard let epoch = membersEpoch(value), value.count > 4 + Ed25519.signatureSize, let sealingKey = try? derive(key, "members \(format)") else {
            throw .tampered("the member list is malformed")
        }
        let ciphertext = Array(value[4..<(value.count - Ed25519.signatureSize)])
        guard let padded = try? AESGCM.open(ciphertext, key: sealingKey, associatedData: membersKey(prefix, epoch: epoch) + Array(value[0..<4])),
            let plain = SizePadding.unpad(padded)
        else {
            throw .tampered("the member list of epoch \(epoch) does not open with the group key")
        }
        guard let (signer, members) = plain.withUnsafeBytes({ decodeMembers($0) }) else { throw .tampered("the member list is malformed") }
        return MemberList(
            epoch: epoch, members: members, signer: signer, signed: listMessage(prefix, epoch: epoch, ciphertext: ciphertext),
            signature: Array(value.suffix(Ed25519.signatureSize)))
    }

    /// The members of the list `value` holds, which must be signed by one of them.
    static func openMembers(_ value: [UInt8], key: SecretBytes, prefix: [UInt8]) throws(SyncError) -> [Member] {
        let list = try openMemberList(value, key: key, prefix: prefix)
        guard list.isSigned(byOneOf: list.members) else { throw .tampered("the member list of epoch \(list.epoch) is not signed by a member") }
        return list.members
    }

    /// An opened plain list: its signer and members.
    static func decodeMembers(_ raw: UnsafeRawBufferPointer) -> (signer: [UInt8], members: [Member])? {
        var reader = ByteReader(raw)
        guard reader.u8() == format, let signer = reader.take(16) else { return nil }
        var members: [Member] = []
        while reader.remaining > 0 {
            guard let id = reader.take(16), let publicKey = reader.take(32), let signingKey = reader.take(Ed25519.keySize), let length = reader.u8(),
                let name = reader.take(Int(length))
            else { return nil }
            members.append(Member(deviceID: id, publicKey: publicKey, signingKey: signingKey, name: String(decoding: name, as: UTF8.self)))
        }
        return (signer, members)
    }

    /// The refusal for a group whose records are of sync format 2 (one member list at `m`).
    static let formerFormat = SyncError.tampered(
        "the sync group on etcd was written by an older version of keychain (sync format 2), which this version does not read; enroll the devices again: 'keychain sync leave', then 'init' and 'join'"
    )
}
