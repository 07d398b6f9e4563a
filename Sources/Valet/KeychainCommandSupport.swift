import KeychainCore

// What the `keychain` command needs to address exactly the items a Valet does. SPI, not API:
// Valet's public surface stays Valet 5's.

extension Valet {
    /// The attributes that address this Valet's items in a ``KeychainCore/Store``.
    @_spi(KeychainCLI) public var keychainAttributes: Attributes { baseAttributes }

    /// The item this Valet would write for `key`: its attributes and label, exactly.
    @_spi(KeychainCLI) public func keychainItem(forKey key: String, value: SecretBytes) -> Item { sandbox.item(forKey: key, value: value) }

    /// The key of the canary ``canAccessKeychain()`` writes; listings hide it.
    @_spi(KeychainCLI) public static var canaryKeyName: String { Sandbox.canaryKey }
}

/// Valet's accessibility, under a name that does not collide with KeychainCore's.
@_spi(KeychainCLI) public typealias ValetAccessibility = Accessibility
