/// An internet password's protocol (`kSecAttrProtocol`); an unknown raw value reads as `.http`.
public enum LocksmithInternetProtocol: RawRepresentable, Sendable, CaseIterable {
    /// Apple's internet protocols (`kSecAttrProtocol...`).
    case ftp, ftpAccount, http, irc, nntp, pop3, smtp, socks, imap, ldap, appleTalk, afp, telnet, ssh, ftps, https
    /// Apple's internet protocols (`kSecAttrProtocol...`).
    case httpProxy, httpsProxy, ftpProxy, smb, rtsp, rtspProxy, daap, eppc, ipp, nntps, ldaps, telnetS, imaps, ircs, pop3S

    public init?(rawValue: String) {
        self = Self.allCases.first { $0.rawValue == rawValue } ?? .http
    }

    public var rawValue: String {
        switch self {
        case .ftp: "ftp "
        case .ftpAccount: "ftpa"
        case .http: "http"
        case .irc: "irc "
        case .nntp: "nntp"
        case .pop3: "pop3"
        case .smtp: "smtp"
        case .socks: "sox "
        case .imap: "imap"
        case .ldap: "ldap"
        case .appleTalk: "atlk"
        case .afp: "afp "
        case .telnet: "teln"
        case .ssh: "ssh "
        case .ftps: "ftps"
        case .https: "htps"
        case .httpProxy: "htpx"
        case .httpsProxy: "htsx"
        case .ftpProxy: "ftpx"
        case .smb: "smb "
        case .rtsp: "rtsp"
        case .rtspProxy: "rtsx"
        case .daap: "daap"
        case .eppc: "eppc"
        case .ipp: "ipp "
        case .nntps: "ntps"
        case .ldaps: "ldps"
        case .telnetS: "tels"
        case .imaps: "imps"
        case .ircs: "ircs"
        case .pop3S: "pops"
        }
    }
}
