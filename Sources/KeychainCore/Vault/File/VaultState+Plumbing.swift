import Dispatch
import FoundationEssentials
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Transactions, error mapping, and the making of a new vault file.
extension VaultState {
    // MARK: - Plumbing

    /// A write transaction on the vault's file, refused when that file is not at the vault's
    /// path any more: a process must not write into a vault the user moved away (its `-wal`
    /// stays behind under the old name, where a vault restored there would read it).
    func writeTransaction<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try Self.writeTransaction(on: connection) { () throws(StoreError) -> R in
            guard !connection.fileHasMoved else {
                throw .io(
                    "\(location.path) was moved, removed or replaced while this process had it open; nothing was written (restart the program to use the vault now at that path)")
            }
            return try body()
        }
    }

    /// A write transaction whose database failures are mapped to ``StoreError``.
    static func writeTransaction<R>(on connection: Connection, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try transaction { () throws(TransactionError<StoreError>) in try connection.writeTransaction(body) }
    }

    /// A transaction's failure as a ``StoreError``: the database's, mapped, or the body's own.
    static func transaction<R>(_ run: () throws(TransactionError<StoreError>) -> R) throws(StoreError) -> R {
        do {
            return try run()
        } catch {
            switch error {
            case .database(let failure): throw map(failure)
            case .body(let failure): throw failure
            }
        }
    }

    func sql<R>(_ body: () throws(SQLiteError) -> R) throws(StoreError) -> R { try Self.sql(body) }

    static func sql<R>(_ body: () throws(SQLiteError) -> R) throws(StoreError) -> R {
        do { return try body() } catch { throw map(error) }
    }

    static func crypto<R>(_ body: () throws(OpenSSLError) -> R) throws(StoreError) -> R { try StoreError.fromOpenSSL(body) }

    /// Creates a new vault (no passphrase, a key file) at the configuration's location, whole
    /// or not at all: the key file is linked into place first (never over an existing one),
    /// then the vault, made and synced in a temporary file, is linked into place (never over
    /// an existing one). If another process creates the vault at the same moment, its vault
    /// is the one that stays.
    ///
    /// - Throws: ``StoreError/orphanedKeyFile(vault:keyFile:)`` when a key file exists without
    ///   its vault (the vault was most probably moved: a new one would orphan that key).
    static func create(_ configuration: VaultConfiguration) throws(StoreError) {
        let location = configuration.location
        if location.isDefault {
            do throws(Errno) { try FileSystem.createDirectory(location.directory) } catch { throw map(error) }
        } else if let why = location.missingDirectory {
            throw .invalidArgument(why)
        }
        try VaultFile.checkDirectory(location.directory)
        let master = SecretBytes.random(count: 32)
        let keyFile = SecretBytes.random(count: 32)
        var header = VaultHeader(vaultID: Random.bytes(VaultHeader.vaultIDSize), protection: .keyFile)
        header.wrappedMasterKey = try crypto { () throws(OpenSSLError) in
            try AESGCM.seal(master, key: keyFile, associatedData: RecordCoding.masterKeyAssociatedData(header))
        }
        // The new vault is made whole under a temporary name first; then its key file and the
        // vault are linked into place one right after the other, so that a process killed
        // while creating a vault leaves either nothing or both (a key file alone would be
        // taken, rightly, for a vault that was moved away).
        let temporary = VaultFile.temporaryName(for: location.path)
        defer { for path in [temporary, temporary + "-wal", temporary + "-shm"] { try? SystemCall.unlink(path) } }
        do throws(Errno) { try FileSystem.createPrivateFile(temporary) } catch { throw map(error) }
        try initializeFile(temporary, header: header, master: master)
        FileSystem.syncFile(temporary)
        guard try VaultFile.createExclusively(keyFile, at: location.keyFilePath, syncDirectory: false) else {
            // Another process may be creating this vault right now: give it a moment.
            guard VaultFile.waitForFile(location.path) else { throw .orphanedKeyFile(vault: location.path, keyFile: location.keyFilePath) }
            return
        }
        do throws(StoreError) {
            guard try VaultFile.linkIntoPlace(temporary, location.path) else {
                // Another process may have finished this very creation (it found the key file
                // alone for a moment): then the vault in place is this one.
                if FileSystem.sameFile(temporary, location.path) { return }
                throw .orphanedKeyFile(vault: location.path, keyFile: location.keyFilePath)
            }
        } catch {
            FileSystem.remove(location.keyFilePath)
            throw error
        }
    }

    /// Writes the schema, the header and an empty item ledger into the new, empty file at
    /// `path`. The connection is closed on return: SQLite checkpoints the WAL into the file and
    /// removes it.
    static func initializeFile(_ path: String, header: VaultHeader, master: SecretBytes) throws(StoreError) {
        let ledger = LedgerRoot.empty(groups: LedgerShards.groupCount(format: header.version)).encoded(
            key: try ledgerKey(lookup: try lookupKey(master: master)), vaultID: header.vaultID)
        let connection: Connection
        // The file is renamed into place after this: sidecars named after it must not stay.
        do { connection = try Connection(path: path, create: false, persistentSidecars: false) } catch { throw map(error, path: path) }
        try writeTransaction(on: connection) { () throws(StoreError) in
            try sql { () throws(SQLiteError) in
                try connection.execute(VaultSchema.create)
                try connection.statement(VaultSchema.writeHeader).run([.blob(header.encoded())])
                try connection.statement(VaultSchema.writeMeta).run([.text(VaultSchema.ledgerName), .blob(ledger)])
                try connection.statement(VaultSchema.writeMeta).run([.text(VaultSchema.noCarriedRowsName), .blob([1])])
            }
        }
    }

    /// An open failure, saying which file and, for permissions, that they are the reason.
    static func map(_ error: SQLiteError, path: String) -> StoreError {
        if error.systemErrno == EACCES || error.systemErrno == EPERM { return .io("cannot open \(path): permission denied") }
        if error.isCorruption { return .corrupted("\(path) is not a keychain vault (SQLite: \(error.message))") }
        return .io("cannot open \(path): \(error.message)")
    }

    /// The one place SQLite failures become ``StoreError``. `SQLITE_BUSY` only gets here after
    /// the busy timeout has expired.
    static func map(_ error: SQLiteError) -> StoreError {
        if error.isCorruption { return .corrupted("SQLite reports: \(error.message)") }
        if error.isConstraint { return .duplicateItem }
        if error.isBusy { return .io("the vault stayed locked by another process beyond the busy timeout") }
        if error.isOutOfSpace { return .io("no space left for the vault (disk full, quota or file-size limit); nothing was written") }
        if error.isWriteFailure { return .io("writing the vault failed (disk full, quota, file-size limit or a device error); nothing was written") }
        if error.isReadOnly { return .io("the vault is read-only") }
        return .io(error.message)
    }

    static func map(_ error: Errno) -> StoreError {
        .io(error.description)
    }
}
