import KeychainCore

/// The open sessions (`org.freedesktop.Secret.Session`), each its client's: opened, used and
/// closed only by the client that opened it, closed when it leaves the bus, shared fairly
/// (``ClientObjects``).
///
/// Python's secretstorage opens a session for every item object it reads a secret through and
/// never closes one (a program reading 10,000 items holds 10,000 sessions until it exits). So a
/// client at its limit is never refused: its least recently used session is closed to make
/// room, which only a client still reading through thousands of older sessions could notice
/// (as `NoSession`, and a session opened again cures it).
struct SessionTable {
    /// The most sessions one client holds at once, and all clients together.
    static let perClient = 4_096
    static let total = 16_384

    private var sessions: ClientObjects<TransferSession>

    init(perClient: Int = Self.perClient, total: Int = Self.total) {
        sessions = ClientObjects(perClient: perClient, total: total)
    }

    var count: Int { sessions.count }
    var isEmpty: Bool { sessions.isEmpty }
    func count(ownedBy client: String) -> Int { sessions.count(ownedBy: client) }

    /// Whether a session has this path (for `Introspect` and the interface check: whose it is
    /// is asked when it is used).
    func contains(_ path: String) -> Bool { sessions.peek(path) != nil }

    /// Opens a session of `algorithm` for `client`: the output `OpenSession` answers and the
    /// session's path.
    /// - Throws: `NotSupported` for an unknown algorithm, `InvalidArgs` for a Diffie-Hellman
    ///   input that is not a public value in range.
    mutating func open(algorithm: String, input: BusValue, for client: String) throws(ServiceError) -> (output: BusValue, path: String) {
        let path = ObjectPath.sessionPath(ItemID.make())
        let session: TransferSession, output: BusValue
        switch algorithm {
        case TransferSession.plainName:
            session = TransferSession(path: path, owner: client, algorithm: .plain)
            output = .string("")
        case TransferSession.diffieHellmanName:
            guard let clientPublic = input.bytes else { throw .init(.invalidArgs, "the \(algorithm) session takes the client's public value as a byte array (ay)") }
            let agreed = try DiffieHellman.agree(clientPublic: clientPublic)
            session = TransferSession(path: path, owner: client, algorithm: .diffieHellman(key: agreed.key))
            output = .bytes(SecretBytes(agreed.publicValue))
        default:
            throw .init(.notSupported, "the session algorithm '\(algorithm)' is not supported: use plain or \(TransferSession.diffieHellmanName)")
        }
        // What is reclaimed is simply gone: a session has nobody to tell.
        _ = sessions.insert(session, at: path, owner: client)
        return (output, path)
    }

    /// The session `path` names, if `client` opened it: a client never uses another's session.
    mutating func session(_ path: String, for client: String) throws(ServiceError) -> TransferSession {
        guard let found = sessions.peek(path), found.owner == client, let (_, session) = sessions.use(path) else {
            throw .init(.noSession, "no session \(path) of this client: open one with OpenSession")
        }
        return session
    }

    /// Closes the session at `path`, if `client` opened it.
    mutating func close(_ path: String, by client: String) throws(ServiceError) {
        _ = try session(path, for: client)
        sessions.remove(path)
    }

    /// Closes every session of a client that left the bus.
    mutating func clientLeft(_ client: String) { _ = sessions.removeAll(ownedBy: client) }
}
