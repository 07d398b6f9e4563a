/// When this device last applied what it pulled, as the vault holds it: what tells a command
/// that the agent it started has finished its first round.
extension SyncEngine {
    /// Milliseconds since 1970 at this device's last applied pull (0: never). Reads the vault only.
    /// - Throws: ``SyncError/notEnrolled``, ``SyncError/store(_:)`` when the vault cannot be read.
    package func lastPullMilliseconds() throws(SyncError) -> UInt64 { try state().lastPull }
}
