/// An internet password's authentication scheme (`kSecAttrAuthenticationType`); an unknown raw
/// value reads as `.default`.
public enum LocksmithInternetAuthenticationType: RawRepresentable, Sendable, CaseIterable {
    /// Apple's authentication schemes (`kSecAttrAuthenticationType...`).
    case ntlm, msn, dpa, rpa, httpBasic, httpDigest, htmlForm, `default`

    public init?(rawValue: String) {
        self = Self.allCases.first { $0.rawValue == rawValue } ?? .default
    }

    public var rawValue: String {
        switch self {
        case .ntlm: "ntlm"
        case .msn: "msna"
        case .dpa: "dpaa"
        case .rpa: "rpaa"
        case .httpBasic: "http"
        case .httpDigest: "httd"
        case .htmlForm: "form"
        case .default: "dflt"
        }
    }
}
