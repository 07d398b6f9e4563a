/// What a write did: its counts, and whether it journaled a synchronizable change, which
/// ``Vault`` then hands to sync (the engine running in this process, or one it starts).
struct WriteOutcome: Sendable {
    let result: WriteResult
    let journaled: Bool
}
