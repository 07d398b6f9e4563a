/// What one read reuses for every row it opens: a locked buffer for their plaintexts, and the
/// last class key it looked up.
///
/// A listing opens the attributes of thousands of rows, most under one class key: it is looked
/// up once rather than in the dictionary for each row (the benchmark's listing shows it). The
/// key cannot change under it: a read holds the vault's lock from its first row to its last,
/// and locking or rekeying takes that lock; only a row that fails to open can find the keys
/// rotated by another process and drop them, and the read then forgets the key it kept
/// (``forgetClassKey()``). Not shared: one read owns it.
final class RowScratch {
    let plaintext = LockedScratch()
    private var lastKey: (accessibility: Accessibility, key: SealingKey)?

    /// The class key of `accessibility`: the last one if it is the same class, else `lookup`'s.
    func classKey(
        _ accessibility: Accessibility, _ lookup: (Accessibility) throws(StoreError) -> SealingKey
    ) throws(StoreError) -> SealingKey {
        if let lastKey, lastKey.accessibility == accessibility { return lastKey.key }
        let key = try lookup(accessibility)
        lastKey = (accessibility, key)
        return key
    }

    /// Looks the next key up again.
    func forgetClassKey() { lastKey = nil }
}
