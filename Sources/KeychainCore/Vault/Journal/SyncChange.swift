/// One synchronizable item as it changed: what the vault's sync journal records for each
/// write, what the outbox sends and what a pull applies. The clock decides which of two
/// changes to one item wins (last writer wins); equal clocks are ordered by origin device.
struct SyncChange: Sendable {
    /// The item's identity digest in this vault (computed here, never taken from outside).
    var identity: [UInt8]
    /// A hybrid logical clock: milliseconds since 1970 shifted left 16 bits, plus a counter.
    var clock: UInt64
    /// The device that made the change (16 bytes).
    var origin: [UInt8]
    var deleted: Bool
    var itemClass: ItemClass
    /// Every attribute of a live item; the identity attributes of a deleted one.
    var attributes: Attributes
    /// A live item's value, when it was read with it.
    var value: SecretBytes?

    /// Whether this change is newer than one made at `clock` by `origin`.
    func isNewer(thanClock clock: UInt64, origin: [UInt8]) -> Bool {
        self.clock != clock ? self.clock > clock : origin.lexicographicallyPrecedes(self.origin)
    }

    /// The clock for a change made now after one at `previous`: ahead of the wall clock's
    /// milliseconds and of every clock this item has seen, so a write always wins over what it replaced.
    static func nextClock(after previous: UInt64) -> UInt64 { max(nowMilliseconds() << 16, previous &+ 1) }

    /// Milliseconds since 1970 by the wall clock.
    static func nowMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
    }

    /// What the journal keeps of an item: the attributes that name it, and its accessibility.
    static func address(of itemClass: ItemClass, _ attributes: Attributes) -> Attributes {
        var address = Attributes()
        for field in AttributeField.identity(of: itemClass) { field.copy(from: attributes, to: &address) }
        address.accessibility = attributes.accessibility
        return address
    }

    // MARK: - Encoding

    static let version: UInt8 = 1

    /// `version || clock (8) || origin (16) || deleted (1) || class (1) || attributes (RecordCoding)`,
    /// then, when `withValue`, the value's bytes.
    func encoded(withValue: Bool) -> SecretBytes {
        var head: [UInt8] = [Self.version]
        head += [UInt8](bigEndian: clock)
        head += origin
        head.append(deleted ? 1 : 0)
        head.append(itemClass.code)
        let attributeBytes = RecordCoding.encode(attributes)
        head += [UInt8](bigEndian: UInt32(attributeBytes.count))
        head += attributeBytes
        guard withValue, let value else { return SecretBytes(head) }
        return SecretBytes(count: head.count + value.count) { buffer in
            buffer.copyBytes(from: head)
            value.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[head.count...]).copyMemory(from: $0) }
        }
    }

    /// Decodes what ``encoded(withValue:)`` made; nil when malformed. `identity` is left empty:
    /// the reader computes it from the attributes.
    static func decode(_ bytes: SecretBytes) -> SyncChange? { bytes.withUnsafeBytes { decode(raw: $0) } }

    /// Decodes the change `raw` holds (bytes of a buffer that wipes itself).
    static func decode(raw: UnsafeRawBufferPointer) -> SyncChange? {
        var reader = ByteReader(raw)
        guard reader.u8() == version, let clockBytes = reader.slice(8), let origin = reader.slice(16), let deleted = reader.u8(), deleted <= 1,
            let classCode = reader.u8(), let itemClass = ItemClass(code: classCode), let length = reader.u32(),
            let attributeBytes = reader.slice(Int(length)), let attributes = RecordCoding.decodeAttributes(attributeBytes)
        else { return nil }
        let clock = clockBytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let rest = reader.remaining
        let value: SecretBytes? =
            rest > 0 || deleted == 0
            ? SecretBytes(count: rest) { buffer in
                if rest > 0, let tail = reader.slice(rest) { buffer.copyMemory(from: tail) }
            } : nil
        return SyncChange(identity: [], clock: clock, origin: Array(origin), deleted: deleted == 1, itemClass: itemClass, attributes: attributes, value: value)
    }
}

#if canImport(Glibc)
    import Glibc
#endif
