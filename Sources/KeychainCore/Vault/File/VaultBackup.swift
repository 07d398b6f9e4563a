internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Consistent single-file copies of a live vault, and putting one back. Copying the vault's
/// file by hand misses what is still in its `-wal` file; these read one snapshot through
/// SQLite (`VACUUM INTO`), while other processes keep using the vault.
extension Vault {
    /// Writes a consistent copy of the vault to `path` (mode 0600), and, for a vault without a
    /// passphrase, a copy of its key file to `path.key`: what a backup must hold to open.
    /// Nothing is written over: both files must not exist yet.
    ///
    /// - Throws: ``StoreError/noVault(path:)`` when there is no vault, ``StoreError/invalidArgument(_:)``
    ///   when a file is already at `path` or `path.key`, and the usual open and I/O errors.
    ///   The copy is verified (it opens, and SQLite's integrity check passes) before this returns.
    public func backup(to path: String) throws(StoreError) {
        let destination = VaultLocation(path: path)
        guard let vault = try openedIfPresent() else { throw .noVault(path: location.path) }
        try VaultDestination.requireFree(destination, for: "a backup")
        try VaultFile.checkDirectory(destination.directory)
        try Self.copy(from: vault, to: destination, keyFile: vault.locked({ $0.hasPassphrase }) ? nil : try VaultFile.readKeyFile(location.keyFilePath))
    }

    /// Puts the backup at `path` (and its `path.key`, for a vault without a passphrase) where
    /// this vault lives, when there is no vault there: a restore never replaces a vault, and
    /// never shares a file with one (SQLite's `-wal` or `-shm` left from a vault that was moved
    /// away, or still open in another process). The restored copy is made under a temporary
    /// name and linked into place whole. It becomes current: the kernel keyring's record of the
    /// newer generations this boot has seen of it at this place (which would refuse it as a
    /// rolled-back file) is dropped, and for a vault without a passphrase the restored
    /// generation recorded; a passphrase vault restored from a copy made in this boot takes
    /// writes after ``acceptCurrentGeneration()`` (its ``RollbackCheck`` is unknown until then).
    /// Reading the backup leaves nothing beside it.
    ///
    /// - Throws: ``StoreError/invalidArgument(_:)`` when a vault, a key file or a sidecar is
    ///   already in place (naming the process that holds it open, if one does); the backup's
    ///   own open errors when it is not a sound vault (nothing is changed).
    public func restore(from path: String) throws(StoreError) {
        try VaultDestination.requireFree(location, for: "a restore")
        let source = VaultLocation(path: path)
        let sidecarsBefore = VaultDestination.presentSidecars(of: source)
        defer { VaultDestination.removeSidecars(of: source, except: sidecarsBefore) }
        let vaultID = try Self.restore(source, into: location)
        // The owner puts an older copy back on purpose: this boot's memory of newer generations
        // of the vault would refuse it as a rollback.
        guard configuration.usesKernelKeyring else { return }
        VaultState.forgetGeneration(of: vaultID, at: location, in: KernelKeyring())
        // A copy last written in this boot has no record here now: its freshness is the owner's
        // word. A vault without a passphrase has it in its key file, restored beside it; one with
        // a passphrase waits for acceptCurrentGeneration() after an unlock.
        if let restored = try? VaultEngine(configuration), !restored.locked({ $0.hasPassphrase }) {
            try? restored.inUse { (state) throws(StoreError) in try state.acceptCurrentGeneration() }
        }
    }

    /// The restore's copy (its connection to the backup closed on return, so that the sidecars
    /// reading it made can go); the restored vault's id.
    private static func restore(_ source: VaultLocation, into location: VaultLocation) throws(StoreError) -> [UInt8] {
        let backup = try VaultEngine(VaultConfiguration(location: source, usesKernelKeyring: false, createIfMissing: false))
        try backup.inUse { (state) throws(StoreError) in try state.verifyIntegrity() }
        do throws(Errno) { try FileSystem.createDirectory(location.directory) } catch { throw VaultState.map(error) }
        try VaultFile.checkDirectory(location.directory)
        // Checked again right before the copy: a process may have created a vault here meanwhile.
        try VaultDestination.requireFree(location, for: "a restore")
        var keyFile: SecretBytes?
        if !backup.locked({ $0.hasPassphrase }) {
            guard case .present = try VaultFile.entry(source.keyFilePath) else {
                throw .invalidArgument(
                    "the backup \(source.path) has no passphrase, so it opens only with its key file \(source.keyFilePath), which is missing: put it back beside the backup")
            }
            keyFile = try VaultFile.readKeyFile(source.keyFilePath)
        }
        try copy(from: backup, to: location, keyFile: keyFile)
        return backup.vaultID
    }

    /// Opens the copy at `destination` and runs SQLite's integrity check (the connection closed on return).
    private static func verifyCopy(_ destination: VaultLocation) throws(StoreError) {
        let copy = try VaultEngine(VaultConfiguration(location: destination, usesKernelKeyring: false, createIfMissing: false))
        try copy.inUse { (state) throws(StoreError) in try state.verifyIntegrity() }
    }

    /// The vault's snapshot into `destination`, made whole and synced under a temporary name,
    /// then its key file and the vault linked into place one right after the other, as a new
    /// vault is (`VaultState.create`): a power cut or a kill between the two links leaves the key
    /// file beside the finished copy under its temporary name, which the next write links
    /// (`VaultState.interruptedCreation`); a key file linked before the copy was made would be
    /// left alone with nothing that opens with it. Verified by opening it.
    private static func copy(from vault: VaultEngine, to destination: VaultLocation, keyFile: SecretBytes?) throws(StoreError) {
        let temporary = VaultFile.temporaryName(for: destination.path)
        defer { try? SystemCall.unlink(temporary) }
        do throws(Errno) { try FileSystem.createPrivateFile(temporary) } catch { throw VaultState.map(error) }
        try vault.inUse { (state) throws(StoreError) in try state.snapshot(into: temporary) }
        FileSystem.syncFile(temporary)
        if let keyFile, try !VaultFile.createExclusively(keyFile, at: destination.keyFilePath, syncDirectory: false) {
            throw .invalidArgument("\(destination.keyFilePath) already exists; nothing was written over it")
        }
        do throws(StoreError) {
            guard try VaultFile.linkIntoPlace(temporary, destination.path) else {
                throw .invalidArgument("\(destination.path) already exists; nothing was written over it")
            }
            try verifyCopy(destination)
            // Checking the copy left SQLite's (empty) sidecars beside it; a copy is one file.
            VaultDestination.removeSidecars(of: destination, except: [])
        } catch {
            if keyFile != nil { FileSystem.remove(destination.keyFilePath) }
            throw error
        }
    }
}
