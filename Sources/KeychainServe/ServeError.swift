import KeychainCore

/// Why `keychain serve` could not start or stopped serving.
package enum ServeError: Error, Sendable, CustomStringConvertible {
    /// No session bus, or libsystemd could not be loaded; the reason says which.
    case unavailable(String)
    /// Another program (gnome-keyring, KWallet, KeePassXC, another `keychain serve`) owns the
    /// name; `replaceRefused` when `--replace` was asked and the owner does not let the name go
    /// (gnome-keyring never does).
    case nameTaken(String, replaceRefused: Bool)
    /// The vault refused to open.
    case store(StoreError)

    package var description: String {
        switch self {
        case .unavailable(let why): why
        case .nameTaken(let name, false):
            "another Secret Service provider owns \(name) on this session bus (gnome-keyring, KWallet, KeePassXC or another keychain serve); stop it, or run keychain serve --replace to take the name from it"
        case .nameTaken(let name, true):
            "the Secret Service provider that owns \(name) on this session bus does not let another replace it (gnome-keyring never does): stop it first (for gnome-keyring: systemctl --user stop gnome-keyring-daemon.service gnome-keyring-daemon.socket, or end the gnome-keyring-daemon process), then start keychain serve; keychain migrate --foreign --from secret-service --to vault brings its items over before"
        case .store(let error): error.description
        }
    }
}
