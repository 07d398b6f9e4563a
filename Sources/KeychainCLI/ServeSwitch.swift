import KeychainCore

/// Making a `keychain serve --install` take on the session bus running now, and saying who
/// serves after it: the bus reads its activation files again (else it keeps starting the
/// provider it read at its start), and the name's owner, if any, is named with what to do.
enum ServeSwitch {
    /// Reloads the bus's configuration and describes what the next Secret Service call reaches.
    static func takeEffect(_ context: Context, vault: Vault?) -> String {
        do {
            try SecretServiceOwner.reloadBusConfiguration()
        } catch {
            return "no session bus here to tell (\(error.description)): the files take effect in the next session"
        }
        let owner: SecretServiceOwner?
        do {
            owner = try SecretServiceOwner.current()
        } catch {
            return "the session bus read the files again, but did not say who owns org.freedesktop.secrets (\(error.description))"
        }
        guard let owner else {
            return "the session bus read the files again: its next Secret Service call starts keychain serve (systemctl --user daemon-reload too, where systemd runs the session)"
        }
        let process = owner.processID.map { "process \($0)" } ?? owner.uniqueName
        if let vault, owner.serves(vault) { return "keychain serve of this vault (\(process)) serves the session bus already" }
        if let served = owner.servedVault {
            return
                "keychain serve of another vault (\(served.path), \(process)) still owns org.freedesktop.secrets: keychain serve --replace takes the name from it now, or the next call after it stops starts keychain serve"
        }
        return
            "another provider (\(process)) still owns org.freedesktop.secrets and answers every call until it stops: move its items first (keychain migrate --foreign --from secret-service --to vault), then stop it (gnome-keyring: systemctl --user stop gnome-keyring-daemon.service gnome-keyring-daemon.socket, or end gnome-keyring-daemon), and the next call starts keychain serve"
    }
}
