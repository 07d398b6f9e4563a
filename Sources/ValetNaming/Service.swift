import KeychainCore

/// The single source of truth for a Valet's sandbox: its service string and base query.
package enum Service: CustomStringConvertible, Equatable, Sendable {
    case standard(Identifier, Configuration)
    case sharedGroup(SharedGroupIdentifier, Identifier?, Configuration)
    case standardOverride(service: Identifier, Configuration)
    case sharedGroupOverride(service: SharedGroupIdentifier, Configuration)

    package static func == (lhs: Service, rhs: Service) -> Bool { lhs.description == rhs.description }

    package var configuration: Configuration {
        switch self {
        case .standard(_, let c), .sharedGroup(_, _, let c), .standardOverride(_, let c), .sharedGroupOverride(_, let c): c
        }
    }

    /// The service string, built byte for byte as Valet builds its `kSecAttrService`.
    package var description: String {
        let configuration = configuration
        // The Secure Enclave flavours append their access control's suffix (empty for userPresence).
        let suffix = configuration.accessControl?.description ?? ""
        switch self {
        case .standard(let identifier, _):
            return "VAL_\(configuration)_initWithIdentifier:accessibility:_\(identifier)_\(configuration.accessibility)\(suffix)"
        case .sharedGroup(let group, let identifier, _):
            if let identifier {
                return "VAL_\(configuration)_initWithSharedAccessGroupIdentifier:accessibility:_\(group.groupIdentifier)_\(identifier)_\(configuration.accessibility)\(suffix)"
            }
            return "VAL_\(configuration)_initWithSharedAccessGroupIdentifier:accessibility:_\(group.groupIdentifier)_\(configuration.accessibility)\(suffix)"
        case .standardOverride(let identifier, _):
            return identifier.description
        case .sharedGroupOverride(let group, _):
            return group.groupIdentifier
        }
    }

    /// The service string a Valet of this configuration used under a removed accessibility
    /// (`AccessibleAlways...`), for migrating its items. Valet's AlwaysThisDeviceOnly migration
    /// builds the full format even for explicitly set valets (`fullOverrides`), a quirk kept so
    /// that the same items are found.
    package func legacyDescription(accessibility: String, fullOverrides: Bool) -> String {
        let configuration = configuration
        switch self {
        case .standard(let identifier, _):
            return "VAL_\(configuration)_initWithIdentifier:accessibility:_\(identifier)_\(accessibility)"
        case .sharedGroup(let group, let identifier, _):
            let middle = identifier.map { "\(group.groupIdentifier)_\($0)" } ?? group.groupIdentifier
            return "VAL_\(configuration)_initWithSharedAccessGroupIdentifier:accessibility:_\(middle)_\(accessibility)"
        case .standardOverride(let identifier, _):
            return fullOverrides ? "VAL_\(configuration)_initWithIdentifier:accessibility:_\(identifier)_\(accessibility)" : identifier.description
        case .sharedGroupOverride(let group, _):
            return fullOverrides ? "VAL_\(configuration)_initWithSharedAccessGroupIdentifier:accessibility:_\(group.description)_\(accessibility)" : group.description
        }
    }

    /// The access group attribute: the full group for shared valets, none otherwise.
    package var accessGroup: String {
        switch self {
        case .sharedGroup(let group, _, _), .sharedGroupOverride(let group, _): group.description
        case .standard, .standardOverride: ""
        }
    }

    /// What the instance cache keys on. Explicitly set valets add their configuration,
    /// accessibility and identifier, as Valet does; every key adds the access group, so two
    /// groups with one group identifier never share an instance.
    package var cacheKey: String {
        switch self {
        case .standardOverride(let identifier, let c):
            return description + c.description + c.accessibility.description + identifier.description
        case .sharedGroupOverride(let group, let c):
            return description + c.description + c.accessibility.description + group.description
        case .standard, .sharedGroup:
            return description + "|" + accessGroup
        }
    }

    /// The attributes every item of this Valet carries and every query names. Access group and
    /// synchronizable are always named, so a plain Valet never sees a synchronizable item, nor a
    /// group's item, even when an explicitly set service string coincides.
    package var baseAttributes: Attributes {
        Attributes(
            service: description, accessGroup: accessGroup, synchronizable: configuration.isSynchronizable,
            accessibility: configuration.accessibility.coreValue, accessControl: configuration.accessControl?.coreValue)
    }

    /// The same sandbox shape with another configuration: Secure Enclave valets ask a plain
    /// whenPasscodeSetThisDeviceOnly Valet of the same identifier or group whether the keychain
    /// can be used, as Valet does.
    package func with(_ configuration: Configuration) -> Service {
        switch self {
        case .standard(let identifier, _): .standard(identifier, configuration)
        case .sharedGroup(let group, let identifier, _): .sharedGroup(group, identifier, configuration)
        case .standardOverride(let identifier, _): .standardOverride(service: identifier, configuration)
        case .sharedGroupOverride(let group, _): .sharedGroupOverride(service: group, configuration)
        }
    }
}
