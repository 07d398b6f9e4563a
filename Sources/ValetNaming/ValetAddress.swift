import KeychainCore

/// Where a Valet's items live: its sandbox (service string, access group, synchronizable,
/// accessibility) and the identifier its items are labelled with. Valet's factories and the
/// `keychain` command both build addresses here, so they cannot disagree on a byte.
package struct ValetAddress: Sendable {
    package let service: Service
    package let identifier: Identifier
    /// Computed once: the service string is an interpolation Valet would otherwise redo on every call.
    package let baseAttributes: Attributes

    package init(_ service: Service, identifier: Identifier) {
        self.service = service
        self.identifier = identifier
        self.baseAttributes = service.baseAttributes
    }

    // MARK: Valet's factories

    package static func valet(with identifier: Identifier, accessibility: Accessibility) -> Self {
        Self(.standard(identifier, .valet(accessibility)), identifier: identifier)
    }

    package static func iCloudValet(with identifier: Identifier, accessibility: CloudAccessibility) -> Self {
        Self(.standard(identifier, .iCloud(accessibility)), identifier: identifier)
    }

    package static func sharedGroupValet(with group: SharedGroupIdentifier, identifier: Identifier?, accessibility: Accessibility) -> Self {
        Self(.sharedGroup(group, identifier, .valet(accessibility)), identifier: identifier ?? group.asIdentifier)
    }

    package static func iCloudSharedGroupValet(with group: SharedGroupIdentifier, identifier: Identifier?, accessibility: CloudAccessibility) -> Self {
        Self(.sharedGroup(group, identifier, .iCloud(accessibility)), identifier: identifier ?? group.asIdentifier)
    }

    package static func valet(withExplicitlySet identifier: Identifier, accessibility: Accessibility) -> Self {
        Self(.standardOverride(service: identifier, .valet(accessibility)), identifier: identifier)
    }

    package static func iCloudValet(withExplicitlySet identifier: Identifier, accessibility: CloudAccessibility) -> Self {
        Self(.standardOverride(service: identifier, .iCloud(accessibility)), identifier: identifier)
    }

    package static func sharedGroupValet(withExplicitlySet group: SharedGroupIdentifier, accessibility: Accessibility) -> Self {
        Self(.sharedGroupOverride(service: group, .valet(accessibility)), identifier: group.asIdentifier)
    }

    package static func iCloudSharedGroupValet(withExplicitlySet group: SharedGroupIdentifier, accessibility: CloudAccessibility) -> Self {
        Self(.sharedGroupOverride(service: group, .iCloud(accessibility)), identifier: group.asIdentifier)
    }

    package static func secureEnclave(with identifier: Identifier, accessControl: SecureEnclaveAccessControl, singlePrompt: Bool) -> Self {
        Self(.standard(identifier, singlePrompt ? .singlePromptSecureEnclave(accessControl) : .secureEnclave(accessControl)), identifier: identifier)
    }

    package static func secureEnclave(
        sharedGroup group: SharedGroupIdentifier, identifier: Identifier?, accessControl: SecureEnclaveAccessControl,
        singlePrompt: Bool
    ) -> Self {
        Self(
            .sharedGroup(group, identifier, singlePrompt ? .singlePromptSecureEnclave(accessControl) : .secureEnclave(accessControl)),
            identifier: identifier ?? group.asIdentifier)
    }

    // MARK: Items

    /// The key of the canary `canAccessKeychain()` writes; listings hide it.
    package static let canaryKey = "VAL_KeychainCanaryUsername"
    package static let canaryValue = "VAL_KeychainCanaryPassword"

    package var configuration: Configuration { service.configuration }

    package func attributes(forKey key: String) -> Attributes {
        var attributes = baseAttributes
        attributes.account = key
        return attributes
    }

    /// The item for `key`, labelled with the identifier and key: what a person sees in a
    /// keyring manager such as Seahorse.
    package func item(forKey key: String, value: SecretBytes) -> Item {
        var attributes = attributes(forKey: key)
        attributes.label = "\(identifier): \(key)"
        return Item(.genericPassword, attributes: attributes, value: value)
    }
}
