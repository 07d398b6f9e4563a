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
        for file in [destination.path, destination.keyFilePath] {
            guard case .missing = try VaultFile.entry(file) else {
                throw .invalidArgument("\(file) already exists; a backup never writes over a file")
            }
        }
        try VaultFile.checkDirectory(destination.directory)
        try Self.copy(from: vault, to: destination, keyFile: vault.hasPassphrase ? nil : try VaultFile.readKeyFile(location.keyFilePath))
        // The check of the copy left SQLite's (empty) sidecars beside it; a backup is one file.
        for suffix in ["-wal", "-shm"] { unlink(destination.path + suffix) }
    }

    /// Puts the backup at `path` (and its `path.key`, for a vault without a passphrase) where
    /// this vault lives, when there is no vault there: a restore never replaces a vault. The
    /// restored copy becomes current: the kernel keyring's record of the newer generations this
    /// boot has seen of it (which would refuse it as a rolled-back file) is dropped.
    ///
    /// - Throws: ``StoreError/invalidArgument(_:)`` when a vault (or a key file) is already in
    ///   place; the backup's own open errors when it is not a sound vault (nothing is changed).
    public func restore(from path: String) throws(StoreError) {
        for file in [location.path, location.keyFilePath] {
            guard case .missing = try VaultFile.entry(file) else {
                throw .invalidArgument("\(file) already exists; move it away first (a restore never replaces a vault)")
            }
        }
        let source = VaultLocation(path: path)
        let backup = try OpenVault(VaultConfiguration(location: source, usesKernelKeyring: false, createIfMissing: false))
        try backup.verifyIntegrity()
        do throws(FileSystem.Failure) { try FileSystem.createDirectory(location.directory) } catch { throw OpenVault.map(error) }
        try VaultFile.checkDirectory(location.directory)
        try Self.copy(from: backup, to: location, keyFile: backup.hasPassphrase ? nil : try VaultFile.readKeyFile(source.keyFilePath))
        // The owner puts an older copy back on purpose: this boot's memory of newer generations
        // of the vault would refuse it as a rollback.
        if configuration.usesKernelKeyring { OpenVault.forgetGeneration(of: backup.header.vaultID, in: KernelKeyring()) }
    }

    /// The vault's snapshot into `destination`: key file linked first, then the vault file,
    /// made in a temporary file and linked into place; verified by opening it.
    private static func copy(from vault: OpenVault, to destination: VaultLocation, keyFile: SecretBytes?) throws(StoreError) {
        if let keyFile, try !VaultFile.createExclusively(keyFile, at: destination.keyFilePath) {
            throw .invalidArgument("\(destination.keyFilePath) already exists; nothing was written over it")
        }
        let temporary = VaultFile.temporaryName(for: destination.path)
        defer { unlink(temporary) }
        do throws(StoreError) {
            do throws(FileSystem.Failure) { try FileSystem.createPrivateFile(temporary) } catch { throw OpenVault.map(error) }
            try vault.snapshot(into: temporary)
            FileSystem.syncFile(temporary)
            guard try VaultFile.linkIntoPlace(temporary, destination.path) else {
                throw .invalidArgument("\(destination.path) already exists; nothing was written over it")
            }
            let copy = try OpenVault(VaultConfiguration(location: destination, usesKernelKeyring: false, createIfMissing: false))
            try copy.verifyIntegrity()
        } catch {
            if keyFile != nil { unlink(destination.keyFilePath) }
            throw error
        }
    }
}
