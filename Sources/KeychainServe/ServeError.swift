import KeychainCore

/// Why `keychain serve` could not start or stopped serving.
public enum ServeError: Error, Sendable, CustomStringConvertible {
    /// No session bus, or libsystemd could not be loaded; the reason says which.
    case unavailable(String)
    /// Another program (gnome-keyring, KWallet, KeePassXC, another `keychain serve`) owns the name.
    case nameTaken(String)
    /// The vault refused to open.
    case store(StoreError)

    public var description: String {
        switch self {
        case .unavailable(let why): why
        case .nameTaken(let name):
            "another Secret Service provider owns \(name) on this session bus (gnome-keyring, KWallet, KeePassXC or another keychain serve); stop it, or run keychain serve --replace to take the name from it"
        case .store(let error): error.description
        }
    }
}
