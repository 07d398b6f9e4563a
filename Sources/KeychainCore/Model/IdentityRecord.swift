/// An item's identity as bytes, in the vault's own record encoding: what names one item and
/// no other, for the faces that hand out references to items (Security's persistent references).
extension Item {
    /// The class's identity attributes, absent ones as their empty values, encoded as the vault
    /// encodes attributes (tag, length, bytes, in tag order).
    package var identityRecord: [UInt8] {
        RecordCoding.encode(attributes.normalizedIdentity(for: itemClass), fields: AttributeField.identity(of: itemClass).sorted { $0.rawValue < $1.rawValue })
    }
}

extension Attributes {
    /// The identity attributes an ``Item/identityRecord`` of an item of `itemClass` names; nil for
    /// bytes that are not one (malformed, or naming attributes outside the identity).
    package init?(identityRecord: [UInt8], of itemClass: ItemClass) {
        guard let decoded = identityRecord.withUnsafeBytes({ RecordCoding.decodeAttributes($0) }),
            RecordCoding.identityMask(itemClass).contains(all: AttributeField.Mask(present: decoded))
        else { return nil }
        self = decoded
    }
}
