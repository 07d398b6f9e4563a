/// A Valet's flavour and accessibility: half of its sandbox.
package enum Configuration: CustomStringConvertible, Equatable, Sendable {
    case valet(Accessibility)
    case iCloud(CloudAccessibility)
    case secureEnclave(SecureEnclaveAccessControl)
    case singlePromptSecureEnclave(SecureEnclaveAccessControl)

    /// Valet's legacy class names, kept byte for byte because they are part of stored service strings.
    package var description: String {
        switch self {
        case .valet: "VALValet"
        case .iCloud: "VALSynchronizableValet"
        case .secureEnclave: "VALSecureEnclaveValet"
        case .singlePromptSecureEnclave: "VALSinglePromptSecureEnclaveValet"
        }
    }

    package var accessibility: Accessibility {
        switch self {
        case .valet(let accessibility): accessibility
        case .iCloud(let cloud): cloud.accessibility
        // As on Apple: Secure Enclave items need a passcode (here, the vault passphrase).
        case .secureEnclave, .singlePromptSecureEnclave: .whenPasscodeSetThisDeviceOnly
        }
    }

    /// The access control of the Secure Enclave flavours; nil for the others.
    package var accessControl: SecureEnclaveAccessControl? {
        switch self {
        case .secureEnclave(let control), .singlePromptSecureEnclave(let control): control
        case .valet, .iCloud: nil
        }
    }

    package var isSynchronizable: Bool {
        if case .iCloud = self { return true }
        return false
    }

    package var prettyDescription: String {
        switch self {
        case .valet(let accessibility): "\(accessibility) (Valet)"
        case .iCloud(let cloud): "\(cloud) (iCloud)"
        case .secureEnclave(let control), .singlePromptSecureEnclave(let control): "\(configuration: control) (Secure Enclave)"
        }
    }
}
