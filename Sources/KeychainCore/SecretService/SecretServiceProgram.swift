/// Which program a Secret Service provider is, told by the bus: each known provider owns a
/// well-known name of its own on the same connection as `org.freedesktop.secrets`.
///
/// It decides what of an item's shown attributes were stored in it: KeePassXC shows each
/// entry's fields and its own records as attributes beside what clients stored.
package enum SecretServiceProgram: String, Sendable, Equatable, CaseIterable {
    /// `keychain serve` (it says which vault it serves).
    case keychainServe = "keychain serve"
    /// gnome-keyring-daemon (`org.gnome.keyring`).
    case gnomeKeyring = "gnome-keyring"
    /// kwalletd with its Secret Service API on (`org.kde.kwalletd5`, `org.kde.kwalletd6`).
    case kwallet = "KWallet"
    /// KeePassXC with its Secret Service integration on (`org.keepassxc.KeePassXC.MainWindow`).
    case keepassxc = "KeePassXC"
    /// Another provider.
    case unknown = "the provider"

    /// The well-known names that tell each program, asked of the bus in this order.
    static let ownNames: [(name: String, program: SecretServiceProgram)] = [
        ("org.gnome.keyring", .gnomeKeyring), ("org.kde.kwalletd5", .kwallet), ("org.kde.kwalletd6", .kwallet),
        ("org.keepassxc.KeePassXC.MainWindow", .keepassxc),
    ]

    /// KeePassXC's attributes that it works out from the entry and refuses to be given
    /// (`CreateItem` then leaves an empty entry and fails).
    static let keepassxcComputed: Set<String> = ["Uuid", "Path", "TOTP"]
    /// The fields every KeePassXC entry has, shown as attributes even when empty.
    static let keepassxcFields: Set<String> = ["UserName", "URL", "Notes"]

    /// The attributes the program refuses to be given with a new item: KeePassXC's `Uuid`,
    /// `Path` and `TOTP`, which it works out itself.
    package var refusedAttributes: Set<String> { self == .keepassxc ? Self.keepassxcComputed : [] }

    /// The attributes of an item that were stored in it, out of those the provider shows: what
    /// moves with the item to another provider.
    ///
    /// For KeePassXC, left out are the ones it works out (`Uuid`, `Path`, `TOTP`), its
    /// record of the secret's content type (`FDO_SECRETS_CONTENT_TYPE`: it comes across as
    /// the content type), the title (`Title`: the label) and the entry's fields while empty
    /// (`UserName`, `URL`, `Notes`). Filled fields stay: they are the entry's data. Given back,
    /// KeePassXC shows the same again. Every other provider's are kept as they are.
    package func storedAttributes(_ shown: [String: String]) -> [String: String] {
        guard self == .keepassxc else { return shown }
        return shown.filter { name, value in
            if Self.keepassxcComputed.contains(name) || name == "FDO_SECRETS_CONTENT_TYPE" || name == "Title" { return false }
            return !(Self.keepassxcFields.contains(name) && value.isEmpty)
        }
    }
}
