/// An unlock this daemon's pinentry made where the kernel keyring could not share it with the
/// user's processes (turned off, or refused in a container): no expiry of the user's unlocked
/// state ends it then, and no other process's lock reaches it, so the daemon ends it itself
/// after the user-unlock timeout without a call, as the idle lock ends the user's.
struct OwnUnlock {
    /// When the pinentry unlocked.
    let since: ContinuousClock.Instant
    /// How long it lasts without a call.
    let limit: Duration

    /// Whether, by `now`, it went `limit` without a call: since the later of its start and
    /// `lastCall` (a client's call, the daemon's only uses of the vault that are the user's).
    func hasLapsed(at now: ContinuousClock.Instant, lastCall: ContinuousClock.Instant) -> Bool {
        now - max(since, lastCall) >= limit
    }
}
