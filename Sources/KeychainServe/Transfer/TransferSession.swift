import KeychainCore

/// A session of the Secret Service (`org.freedesktop.Secret.Session`): how secrets travel
/// between one client and the daemon. It belongs to the client that opened it (its unique bus
/// name) and is closed when that client leaves the bus.
final class TransferSession {
    /// The two algorithms of the specification.
    enum Algorithm {
        /// `plain`: secrets travel as they are.
        case plain
        /// `dh-ietf1024-sha256-aes128-cbc-pkcs7`: secrets travel under the agreed AES-128 key.
        case diffieHellman(key: SecretBytes)
    }

    static let plainName = "plain"
    static let diffieHellmanName = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    let path: String
    /// The unique bus name of the client that opened the session.
    let owner: String
    let algorithm: Algorithm

    init(path: String, owner: String, algorithm: Algorithm) {
        self.path = path
        self.owner = owner
        self.algorithm = algorithm
    }

    /// A secret as the specification's struct `(oayays)`, encrypted for this session.
    func secretStruct(_ value: SecretBytes, contentType: String) throws(ServiceError) -> BusValue {
        switch algorithm {
        case .plain:
            return .structure([.objectPath(path), .bytes(SecretBytes(count: 0) { _ in }), .bytes(value), .string(contentType)])
        case .diffieHellman(let key):
            let sealed = try TransferCipher.seal(value, key: key)
            return .structure([.objectPath(path), .bytes(sealed.iv), .bytes(sealed.ciphertext), .string(contentType)])
        }
    }

    /// The plain value of a secret struct's parameters and value, as this session's client sent them.
    /// - Throws: `InvalidArgs` for parameters a plain session does not take, or a value that
    ///   does not decrypt.
    func open(parameters: SecretBytes, value: SecretBytes) throws(ServiceError) -> SecretBytes {
        switch algorithm {
        case .plain:
            guard parameters.count == 0 else { throw .init(.invalidArgs, "a plain session's secrets carry no parameters") }
            return value
        case .diffieHellman(let key):
            return try TransferCipher.open(value, iv: parameters, key: key)
        }
    }
}
