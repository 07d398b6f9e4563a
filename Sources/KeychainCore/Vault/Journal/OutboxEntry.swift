/// A pending journal entry as the outbox hands it to sync: the change, with its item's value
/// and attributes read now, and the sealed record it was read from (acknowledged only if the
/// journal still holds that record).
struct OutboxEntry {
    var change: SyncChange
    var record: [UInt8]
}
