import KeychainCore
import ValetNaming

/// Which items a command names: a Valet's (by `--identifier` or `--shared-group`, with the key
/// as the positional argument), or items by their raw attributes (`--service`, `--server`...).
struct ItemAddress {
    /// The class and attributes every matching item has (the key not included).
    let itemClass: ItemClass
    let attributes: Attributes
    /// The Valet addressed, if any (the key is then its account, and the canary is hidden).
    let valet: ValetAddress?
    var isValet: Bool { valet != nil }

    static let options: [OptionSpec] = [
        .value("identifier", short: "i", "ID", "the Valet identifier (Valet.valet(with:...))"),
        .value(
            "accessibility", "WHEN", "whenUnlocked (default), afterFirstUnlock, whenPasscodeSetThisDeviceOnly, whenUnlockedThisDeviceOnly, afterFirstUnlockThisDeviceOnly",
            choices: valetAccessibility),
        .value("shared-group", "PREFIX.GROUP", "a shared group Valet, e.g. group.Druidia or AppID12345.Druidia"),
        .flag("icloud", "an iCloud (synchronizable) Valet"),
        .flag("explicit", "a Valet made withExplicitlySet: the identifier (or group) is the service string"),
        .value("service", short: "s", "SERVICE", "raw: a generic password's service"),
        .value("server", "HOST", "raw: an internet password's server"),
        .value("account", short: "a", "ACCOUNT", "raw: the account (or give it as the KEY argument)"),
        .value("access-group", "GROUP", "raw: the access group"),
        .value(
            "protocol", "NAME", "raw: an internet password's protocol: https, http, ftp, ssh, smtp, imap... or Apple's code (htps)",
            choices: ProtocolNames.table.map(\.name)),
        .value("port", "N", "raw: an internet password's port"),
        .value("path", "PATH", "raw: an internet password's path"),
        .flag("foreign", "Secret Service: also address other programs' items (without this tool's schema); they are never read, changed or deleted without it"),
    ]

    init(_ arguments: ParsedArguments, requireTarget: Bool) throws(CommandFailure) {
        let accessibilityName = arguments.value("accessibility")
        if arguments.value("identifier") != nil || arguments.value("shared-group") != nil {
            let valetOption = arguments.value("identifier") != nil ? "identifier" : "shared-group"
            if let raw = ["service", "server", "account", "access-group", "protocol", "port", "path"].first(where: { arguments.value($0) != nil }) {
                throw CommandFailure("--\(valetOption) names a Valet's item and --\(raw) a raw attribute: give one or the other, not both", code: .usage)
            }
            let valet = try Self.valet(arguments, accessibilityName: accessibilityName ?? "whenUnlocked")
            itemClass = .genericPassword
            attributes = valet.baseAttributes
            self.valet = valet
            return
        }
        for valetOnly in ["icloud", "explicit"] where arguments.has(valetOnly) {
            throw CommandFailure("--\(valetOnly) needs --identifier or --shared-group", code: .usage)
        }
        for name in ["service", "server", "account", "access-group", "path", "protocol", "identifier", "shared-group"] where arguments.value(name) == "" {
            throw CommandFailure("--\(name) is empty", code: .usage)
        }
        var attributes = Attributes()
        attributes.service = arguments.value("service")
        attributes.server = arguments.value("server")
        attributes.account = arguments.value("account")
        attributes.accessGroup = arguments.value("access-group")
        attributes.path = arguments.value("path")
        if let name = arguments.value("protocol") { attributes.protocol = try ProtocolNames.code(name) }
        if let port = arguments.value("port") {
            guard let number = Int(port), (0...65535).contains(number) else { throw CommandFailure("--port must be a number from 0 to 65535", code: .usage) }
            attributes.port = number
        }
        if let accessibilityName {
            guard let accessibility = Self.coreAccessibility[accessibilityName] else {
                let hint = Suggestion.hint(accessibilityName, among: Self.coreAccessibility.keys.sorted())
                throw CommandFailure("unknown accessibility '\(accessibilityName)'\(hint)", code: .usage)
            }
            attributes.accessibility = accessibility
        }
        if attributes.service != nil && attributes.server != nil {
            throw CommandFailure("give --service (generic password) or --server (internet password), not both", code: .usage)
        }
        if requireTarget && attributes.service == nil && attributes.server == nil {
            throw CommandFailure("name the item: --identifier ID KEY (a Valet's), or --service/--server with an account", code: .usage)
        }
        itemClass = attributes.server != nil || attributes.protocol != nil || attributes.port != nil || attributes.path != nil ? .internetPassword : .genericPassword
        self.attributes = attributes
        valet = nil
    }

    /// The item to store for `key`: a Valet's exactly as that Valet writes it (label included).
    func item(key: String?, attributes: Attributes, value: SecretBytes) -> Item {
        if let valet, let key {
            var item = valet.item(forKey: key, value: value)
            item.attributes.label = attributes.label ?? item.attributes.label
            item.attributes.comment = attributes.comment
            return item
        }
        return Item(itemClass, attributes: attributes, value: value)
    }

    /// The attributes of one item: the address plus its key (the account).
    func attributes(key: String?) throws(CommandFailure) -> Attributes {
        var result = attributes
        if let key {
            if result.account != nil && !isValet { throw CommandFailure("give the account once: --account or the KEY argument", code: .usage) }
            guard !key.isEmpty else { throw CommandFailure("the key is empty", code: .usage) }
            result.account = key
        } else if isValet {
            throw CommandFailure("missing argument KEY", code: .usage)
        }
        return result
    }

    private static func valet(_ arguments: ParsedArguments, accessibilityName: String) throws(CommandFailure) -> ValetAddress {
        let identifier = Identifier(nonEmpty: arguments.value("identifier"))
        if arguments.value("identifier") != nil && identifier == nil { throw CommandFailure("the identifier is empty", code: .usage) }
        var group: SharedGroupIdentifier?
        if let text = arguments.value("shared-group") {
            guard let dot = text.firstIndex(of: ".") else { throw CommandFailure("--shared-group needs PREFIX.GROUP, e.g. group.Druidia", code: .usage) }
            let prefix = String(text[..<dot]), name = String(text[text.index(after: dot)...])
            group =
                prefix == "group"
                ? SharedGroupIdentifier(groupPrefix: prefix, nonEmptyGroup: name)
                : SharedGroupIdentifier(appIDPrefix: prefix, nonEmptyGroup: name)
            guard group != nil else { throw CommandFailure("--shared-group needs PREFIX.GROUP with both parts non-empty", code: .usage) }
        }
        let explicit = arguments.has("explicit")
        let described = "Accessible" + accessibilityName.capitalizedFirst
        if arguments.has("icloud") {
            guard let cloud = CloudAccessibility.allCases.first(where: { $0.accessibility.description == described }) else {
                throw CommandFailure("an iCloud Valet takes --accessibility whenUnlocked or afterFirstUnlock", code: .usage)
            }
            switch (group, identifier, explicit) {
            case (let g?, _, true): return .iCloudSharedGroupValet(withExplicitlySet: g, accessibility: cloud)
            case (let g?, let i, false): return .iCloudSharedGroupValet(with: g, identifier: i, accessibility: cloud)
            case (nil, let i?, true): return .iCloudValet(withExplicitlySet: i, accessibility: cloud)
            case (nil, let i?, false): return .iCloudValet(with: i, accessibility: cloud)
            case (nil, nil, _): throw CommandFailure("name the Valet with --identifier or --shared-group", code: .usage)
            }
        }
        guard let accessibility = ValetNaming.Accessibility.allCases.first(where: { $0.description == described }) else {
            let hint = Suggestion.hint(accessibilityName, among: valetAccessibility)
            throw CommandFailure("unknown accessibility '\(accessibilityName)'\(hint) (\(valetAccessibility.joined(separator: ", ")))", code: .usage)
        }
        switch (group, identifier, explicit) {
        case (let g?, nil, true): return .sharedGroupValet(withExplicitlySet: g, accessibility: accessibility)
        case (_?, _?, true): throw CommandFailure("--explicit takes --identifier or --shared-group, not both", code: .usage)
        case (let g?, let i, false): return .sharedGroupValet(with: g, identifier: i, accessibility: accessibility)
        case (nil, let i?, true): return .valet(withExplicitlySet: i, accessibility: accessibility)
        case (nil, let i?, false): return .valet(with: i, accessibility: accessibility)
        case (nil, nil, _): throw CommandFailure("name the Valet with --identifier or --shared-group", code: .usage)
        }
    }

    /// What a Valet takes (and raw attributes too), in the order help lists them: what
    /// completion offers. Raw attributes also take `always` and `alwaysThisDeviceOnly`, which
    /// Apple deprecated and no Valet takes.
    static let valetAccessibility = [
        "whenUnlocked", "afterFirstUnlock", "whenPasscodeSetThisDeviceOnly", "whenUnlockedThisDeviceOnly", "afterFirstUnlockThisDeviceOnly",
    ]

    static let coreAccessibility: [String: KeychainCore.Accessibility] = [
        "whenUnlocked": .whenUnlocked, "afterFirstUnlock": .afterFirstUnlock,
        "whenPasscodeSetThisDeviceOnly": .whenPasscodeSetThisDeviceOnly,
        "whenUnlockedThisDeviceOnly": .whenUnlockedThisDeviceOnly,
        "afterFirstUnlockThisDeviceOnly": .afterFirstUnlockThisDeviceOnly,
        "always": .always, "alwaysThisDeviceOnly": .alwaysThisDeviceOnly,
    ]
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + String(dropFirst()) }
}
