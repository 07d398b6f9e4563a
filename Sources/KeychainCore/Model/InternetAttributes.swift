/// An internet password's protocol (`kSecAttrProtocol`), by Apple's four-character raw value.
public struct InternetProtocol: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Internet protocols, with Apple's four-character `kSecAttrProtocol` values (`kSecAttrProtocolFTP` is `ftp `).
    public static let ftp = Self(rawValue: "ftp "), ftpAccount = Self(rawValue: "ftpa"), http = Self(rawValue: "http")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let irc = Self(rawValue: "irc "), nntp = Self(rawValue: "nntp"), pop3 = Self(rawValue: "pop3")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let smtp = Self(rawValue: "smtp"), socks = Self(rawValue: "sox "), imap = Self(rawValue: "imap")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let ldap = Self(rawValue: "ldap"), appleTalk = Self(rawValue: "atlk"), afp = Self(rawValue: "afp ")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let telnet = Self(rawValue: "teln"), ssh = Self(rawValue: "ssh "), ftps = Self(rawValue: "ftps")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let https = Self(rawValue: "htps"), httpProxy = Self(rawValue: "htpx"), httpsProxy = Self(rawValue: "htsx")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let ftpProxy = Self(rawValue: "ftpx"), smb = Self(rawValue: "smb "), rtsp = Self(rawValue: "rtsp")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let rtspProxy = Self(rawValue: "rtsx"), daap = Self(rawValue: "daap"), eppc = Self(rawValue: "eppc")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let ipp = Self(rawValue: "ipp "), nntps = Self(rawValue: "ntps"), ldaps = Self(rawValue: "ldps")
    /// Internet protocols, with Apple's `kSecAttrProtocol` values.
    public static let telnetS = Self(rawValue: "tels"), imaps = Self(rawValue: "imps"), ircs = Self(rawValue: "ircs")
    /// POP3 over TLS, Apple's `kSecAttrProtocolPOP3S`.
    public static let pop3S = Self(rawValue: "pops")
}

/// An internet password's authentication type (`kSecAttrAuthenticationType`), by Apple's raw value.
public struct AuthenticationType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Authentication schemes, with Apple's four-character `kSecAttrAuthenticationType` values.
    public static let ntlm = Self(rawValue: "ntlm"), msn = Self(rawValue: "msna"), dpa = Self(rawValue: "dpaa")
    /// Authentication schemes, with Apple's `kSecAttrAuthenticationType` values.
    public static let rpa = Self(rawValue: "rpaa"), httpBasic = Self(rawValue: "http"), httpDigest = Self(rawValue: "httd")
    /// An HTML form, and the default scheme, with Apple's `kSecAttrAuthenticationType` values.
    public static let htmlForm = Self(rawValue: "form"), `default` = Self(rawValue: "dflt")
}
