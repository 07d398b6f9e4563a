/// A Valet's flavour and accessibility: half of its sandbox.
enum Configuration: CustomStringConvertible, Equatable, Sendable {
    case valet(Accessibility)
    case iCloud(CloudAccessibility)

    /// Valet's legacy class names, kept byte for byte because they are part of stored service strings.
    var description: String {
        switch self {
        case .valet: "VALValet"
        case .iCloud: "VALSynchronizableValet"
        }
    }

    var accessibility: Accessibility {
        switch self {
        case .valet(let accessibility): accessibility
        case .iCloud(let cloud): cloud.accessibility
        }
    }

    var isSynchronizable: Bool {
        if case .iCloud = self { return true }
        return false
    }

    var prettyDescription: String {
        switch self {
        case .valet(let accessibility): "\(accessibility) (Valet)"
        case .iCloud(let cloud): "\(cloud) (iCloud)"
        }
    }
}
