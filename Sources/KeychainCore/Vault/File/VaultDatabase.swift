/// The vault's SQLite file as this process holds it: the connection, and the header as last
/// read. The header's one owner: it changes here only, read again from the file or replaced
/// by what a transaction of this process wrote.
///
/// SQLite runs in multi-thread mode: the engine's lock (``VaultState`` lives behind it) is
/// what keeps this connection to one thread at a time.
final class VaultDatabase {
    let connection: Connection
    /// The header as last read or written by this process.
    private(set) var header: VaultHeader
    /// Whether the schema has a sync journal (``VaultSchema/syncObjects``), as last checked.
    private(set) var hasSyncJournal: Bool

    /// The database of an open connection whose stored header decodes to `header`.
    init(connection: Connection, header: VaultHeader, hasSyncJournal: Bool) {
        self.connection = connection
        self.header = header
        self.hasSyncJournal = hasSyncJournal
    }

    /// Records whether the schema, as just checked or changed, has a sync journal.
    func noteSyncJournal(_ present: Bool) {
        hasSyncJournal = present
    }

    /// Reads the header again: another process may have changed the passphrase or the keys.
    ///
    /// - Throws: ``StoreError/corrupted(_:)`` when it is gone or does not decode,
    ///   ``StoreError/tampered(_:)`` when it names another vault.
    func refreshHeader() throws(StoreError) {
        guard let bytes = try Self.storedHeader(in: connection) else { throw .corrupted("the header is missing") }
        let fresh = try VaultHeader.decode(bytes)
        guard fresh.vaultID == header.vaultID else { throw .tampered("the vault id changed under an open vault") }
        if fresh != header {
            header = fresh
        }
    }

    /// Writes `replacement` as the stored header, inside the caller's write transaction; what
    /// this process holds changes only with ``replaceHeader(with:)``, once the write stands.
    func storeHeader(_ replacement: VaultHeader) throws(StoreError) {
        try VaultState.sql { () throws(SQLiteError) in try connection.statement(VaultSchema.writeHeader).run([.blob(replacement.encoded())]) }
    }

    /// Holds `replacement` as the header: one this process stored, or the one it held before a
    /// write that failed.
    func replaceHeader(with replacement: VaultHeader) {
        header = replacement
    }

    /// The stored header's bytes, or nil when there is none yet.
    static func storedHeader(in connection: Connection) throws(StoreError) -> [UInt8]? {
        try VaultState.sql { () throws(SQLiteError) -> [UInt8]? in
            try connection.statement(VaultSchema.readHeader).with([]) { (s: Statement) throws(SQLiteError) -> [UInt8]? in
                try s.step() ? s.blob(0) : nil
            }
        }
    }

    /// Inside a write transaction: the header is still `planned`, the one a key
    /// change was prepared against before the transaction (scrypt runs outside it). Another
    /// process's rotation or passphrase change since then makes the preparation stale.
    func requireHeader(_ planned: VaultHeader) throws(StoreError) {
        try refreshHeader()
        guard header == planned else {
            throw .io("another process changed the vault's keys or passphrase meanwhile; nothing was changed, run it again")
        }
    }
}
