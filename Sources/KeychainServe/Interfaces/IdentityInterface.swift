import KeychainCore

/// `keychain serve`'s own interface on the service object (``SecretServiceOwner/identityInterface``):
/// which vault it serves, so that the user's commands (`migrate --foreign`, `serve`, `status`)
/// tell it from another provider, and tell which vault, by asking the bus, never `/proc`.
enum IdentityInterface {
    static let name = SecretServiceOwner.identityInterface
    /// Its read-only properties, for introspection.
    static let properties: [(String, String, Bool)] = [("VaultID", "s", false), ("VaultPath", "s", false)]
}

extension SecretServiceDaemon {
    /// The vault's id (empty while it has no file) and path.
    func identityProperties() -> [Property] {
        let identifier = vault?.identifier ?? ""
        let path = vault?.location.path ?? ""
        return [("VaultID", { () throws(ServiceError) in .string(identifier) }), ("VaultPath", { () throws(ServiceError) in .string(path) })]
    }
}
