import FoundationEssentials

/// Everything an open vault knows and holds, reached only through ``VaultEngine``'s lock: the
/// SQLite connection and the header as last read, the lock state and the keys it holds, the item ledger as last
/// verified, the sync enrolment and the identity memo. Not `Sendable`: the compiler keeps it
/// inside the engine's `Mutex`.
///
/// Key hierarchy, after Apple's Data Protection: a random master key, wrapped by the vault key
/// (from a passphrase through scrypt, or from a random key file beside the vault when there is
/// no passphrase); a random key per accessibility class, wrapped by a key derived from the
/// master key (bound to the machine for ThisDeviceOnly classes).
final class VaultState {
    /// How this vault was opened.
    let configuration: VaultConfiguration
    /// Where the vault lives.
    var location: VaultLocation { configuration.location }

    /// The file: its connection and header.
    let database: VaultDatabase
    var connection: Connection { database.connection }
    var header: VaultHeader { database.header }
    /// The item table, whose SQL and rules of rows are its own.
    var items: ItemTable { ItemTable(connection: database.connection, format: Int(database.header.version), path: configuration.location.path) }
    /// How this vault's rows are sealed and opened.
    var sealing: RowSealing { RowSealing(vaultID: database.header.vaultID) }
    /// The keys held and the lock state, which decides when they go.
    var lockState: LockState
    let kernelKeyring = KernelKeyring()
    /// Read on first need: only ThisDeviceOnly classes use it, and most opens touch none.
    lazy var machineID: [UInt8]? = configuration.machineIdentity.read()
    /// This boot, as every write stamps it (``recordingBoot``); read once.
    lazy var boot: [UInt8]? = configuration.bootIdentity.read()
    /// The key of this vault's entry in this boot's generation table: its id (which an open
    /// vault never changes) and where it lives, resolved once rather than at every write.
    lazy var generationRecordID: [UInt8] = GenerationTable.recordID(vaultID: header.vaultID, path: configuration.location.path)
    var identityMemo = IdentityMemo()
    /// The item ledger as last verified.
    var ledger = Ledger()
    /// Whether the vault has a sync journal (``VaultSchema/syncObjects``), as last checked.
    var syncEnrolled: Bool { database.hasSyncJournal }

    /// Opens the existing vault at the configuration's location.
    ///
    /// - Throws: ``StoreError/untrusted(path:reason:)`` or ``StoreError/insecurePermissions(path:)``
    ///   for files another user owns or may change, or that are links; ``StoreError/corrupted(_:)``
    ///   for a file that is not a vault (empty, truncated, another database);
    ///   ``StoreError/tampered(_:)`` for a vault whose schema was altered (a trigger, a view...);
    ///   ``StoreError/unsupportedFormatVersion(_:)``; ``StoreError/io(_:)`` for file-system failures.
    init(_ configuration: VaultConfiguration) throws(StoreError) {
        self.configuration = configuration
        lockState = LockState(LockState.Policy(configuration))
        let location = configuration.location
        // A process whose OpenSSL cannot start would find every checksum wrong: say so instead.
        if let failure = OpenSSLConfiguration.initialisationFailure { throw .unavailable(failure) }
        try VaultFile.checkAll(location)
        let connection: Connection
        do {
            connection = try Connection(path: location.path, create: false)
        } catch {
            throw Self.map(error, path: location.path)
        }
        let schema = try VaultSchema.check(connection, path: location.path)
        guard let bytes = try VaultDatabase.storedHeader(in: connection) else {
            throw .corrupted("\(location.path) has a vault's tables but no header")
        }
        let header = try VaultHeader.decode(bytes)
        try Self.checkFormat(schema: schema.format, header: header, path: location.path)
        database = VaultDatabase(connection: connection, header: header, hasSyncJournal: schema.synced)
    }

    /// A header and a schema of different formats: one of them was replaced. (Format 3 has
    /// format 2's tables.)
    static func checkFormat(schema: Int, header: VaultHeader, path: String) throws(StoreError) {
        guard schema == min(Int(header.version), 2) else {
            throw .tampered("\(path) has a format-\(header.version) header over a format-\(schema) item table; refusing to use it")
        }
    }
}
extension StoreError {
    /// Whether the error means the stored bytes are damaged or altered.
    var isDamage: Bool {
        switch self {
        case .tampered, .corrupted: true
        default: false
        }
    }

    /// Whether the error means "this item's key is not available here", as opposed to damage.
    var isUnavailableKey: Bool {
        switch self {
        case .locked, .boundToAnotherMachine, .passphraseRequired, .unavailable: true
        default: false
        }
    }
}
