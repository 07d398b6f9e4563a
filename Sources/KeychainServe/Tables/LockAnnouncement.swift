/// What clients were last told of the vault's lock state, and when the daemon last looked:
/// the rule that clients hear of each change once, and that the daemon looks at most once a
/// second however many messages come.
struct LockAnnouncement {
    /// Whether the vault was locked when clients were last told; nil before the first look.
    private var told: Bool?
    private var lookedAt = ContinuousClock.now

    /// Whether a look is due at `now` (a second since the last); records the look when it is.
    mutating func lookDue(at now: ContinuousClock.Instant) -> Bool {
        guard now - lookedAt >= .seconds(1) else { return false }
        lookedAt = now
        return true
    }

    /// Records the state seen; true when clients must be told of it (it differs from what they
    /// were told). The first look only records it.
    mutating func changed(to locked: Bool) -> Bool {
        defer { told = locked }
        guard let told else { return false }
        return told != locked
    }
}
