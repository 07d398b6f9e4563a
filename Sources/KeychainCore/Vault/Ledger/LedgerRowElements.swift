/// Item rows' ledger elements as a pass over the table reads them, byte for byte those of
/// ``ItemLedger/element(_:key:vaultID:)``, each message and digest made in arrays kept from one
/// row to the next: a check of every shard makes one for every row of the vault, and arrays of
/// their own for each (the row's identity, its message, its digest) cost a third of the pass.
struct LedgerRowElements {
    private let key: HMACKey
    private var message: [UInt8]
    /// The message's length before its row's fields: the label and the vault's id.
    private let fixed: Int
    private var element = [UInt8](repeating: 0, count: Digest.size)
    /// The same for format 4's scope elements (``ItemLedger/scopeElement(_:scope:key:vaultID:)``).
    private var scopeMessage: [UInt8]
    private let scopeFixed: Int

    init(key: HMACKey, vaultID: [UInt8]) {
        self.key = key
        message = ItemLedger.rowLabel + vaultID
        fixed = message.count
        message.reserveCapacity(fixed + 17 + Digest.size)
        scopeMessage = ItemLedger.scopeRowLabel + vaultID
        scopeFixed = scopeMessage.count
        scopeMessage.reserveCapacity(scopeFixed + 18 + 2 * Digest.size)
    }

    /// Counts the row `s` is on, whose id, class, identity and generation are its columns 0 to
    /// 3 (and its scope digest column 4, for a ledger with scope shards), into its shard of
    /// `tallies` under `state`, and into its scope shard when the ledger has them.
    mutating func count(_ s: Statement, into tallies: inout LedgerTallies, state: LedgerState) {
        message.removeSubrange(fixed...)
        message.appendBigEndian(UInt64(bitPattern: s.integer(0)))
        message.append(UInt8(truncatingIfNeeded: s.integer(1)))
        message.appendBigEndian(UInt64(bitPattern: s.integer(3)))
        let shard = s.withBlob(2) { identity in
            message.append(contentsOf: identity)
            return state.shard(ofItem: identity)
        }
        key.authenticate(message, into: &element)
        tallies.count(element, at: shard, inserted: true)
        if state.isScoped { countScope(s, into: &tallies, at: nil) }
    }

    /// Counts the row `s` is on (columns as ``count(_:into:state:)``, scope digest column 4) by
    /// its scope element: into tally `index` of `tallies`, or (nil) into its scope shard.
    mutating func countScope(_ s: Statement, into tallies: inout LedgerTallies, at index: Int?) {
        scopeMessage.removeSubrange(scopeFixed...)
        scopeMessage.appendBigEndian(UInt64(bitPattern: s.integer(0)))
        scopeMessage.append(UInt8(truncatingIfNeeded: s.integer(1)))
        scopeMessage.appendBigEndian(UInt64(bitPattern: s.integer(3)))
        s.withBlob(2) { identity in
            scopeMessage.append(UInt8(truncatingIfNeeded: identity.count))
            scopeMessage.append(contentsOf: identity)
        }
        let shard = s.withBlob(4) { scope in
            scopeMessage.append(contentsOf: scope)
            return LedgerShards.scopeShard(of: scope)
        }
        key.authenticate(scopeMessage, into: &element)
        tallies.count(element, at: index ?? shard, inserted: true)
    }

    /// As ``count(_:into:state:)``, into tally 0 of `tallies` (one shard's).
    mutating func count(_ s: Statement, into tallies: inout LedgerTallies) {
        message.removeSubrange(fixed...)
        message.appendBigEndian(UInt64(bitPattern: s.integer(0)))
        message.append(UInt8(truncatingIfNeeded: s.integer(1)))
        message.appendBigEndian(UInt64(bitPattern: s.integer(3)))
        s.withBlob(2) { message.append(contentsOf: $0) }
        key.authenticate(message, into: &element)
        tallies.count(element, at: 0, inserted: true)
    }
}
