import Dispatch
import FoundationEssentials

/// What the vault says about itself: its status, its integrity, a snapshot of its file.
extension VaultState {
    /// True once the vault has a passphrase and a presence key pair (made at the first unlock).
    var supportsAccessControl: Bool {
        try? database.refreshHeader()
        return header.hasPassphrase && (try? storedPresenceKey()) != nil
    }

    /// Whether the vault is protected by a passphrase (read from its header as last seen).
    var hasPassphrase: Bool {
        header.hasPassphrase
    }

    /// Where the vault is, whether it is locked, and which classes are available now: a lock
    /// of the user's since this process unlocked counts.
    func status() -> VaultStatus {
        lockState.followLockStamp(in: userLockRecord, hasPassphrase: header.hasPassphrase)
        try? database.refreshHeader()
        try? loadImplicitKeys()
        let available = Accessibility.allCases.filter { classAvailable($0) }
        let count = (try? items.count()) ?? 0
        return VaultStatus(
            location: location, exists: true,
            formatVersion: Int(header.version),
            hasPassphrase: header.hasPassphrase,
            isUnlocked: lockState.isUnlocked,
            userUnlockRemaining: usesUserUnlock ? kernelKeyring.remaining(unlockedDescription) : nil,
            availableClasses: available,
            kernelKeyring: currentKernelKeyringState(),
            machineBinding: machineID == nil ? "no machine id (/etc/machine-id): ThisDeviceOnly classes are unavailable" : nil,
            itemCount: count, rollbackCheck: rollbackCheck())
    }

    /// Writes one consistent snapshot of the whole vault, what its WAL holds included, into the
    /// empty file at `path` (SQLite's `VACUUM INTO`), while other connections go on.
    func snapshot(into path: String) throws(StoreError) {
        try sql { () throws(SQLiteError) in try connection.statement("VACUUM INTO ?").run([.text(path)]) }
    }

    /// Runs SQLite's full integrity check of the vault file (every page, index and row).
    /// - Throws: ``StoreError/corrupted(_:)`` with SQLite's first complaint when it fails.
    func verifyIntegrity() throws(StoreError) {
        let report = try integrityReport()
        guard report == "ok" else { throw .corrupted("integrity check: \(report)") }
    }

    /// SQLite's `PRAGMA integrity_check` (mutex held): "ok", or its first complaint.
    func integrityReport() throws(StoreError) -> String {
        try sql { () throws(SQLiteError) -> String in
            try connection.statement("PRAGMA integrity_check").with([]) { (s: Statement) throws(SQLiteError) -> String in
                try s.step() ? s.text(0) : "no answer"
            }
        }
    }
}
