/// An internet password's protocol (`kSecAttrProtocol`), by Apple's four-character raw value.
public struct InternetProtocol: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let ftp = Self(rawValue: "ftp "), ftpAccount = Self(rawValue: "ftpa"), http = Self(rawValue: "http")
    public static let irc = Self(rawValue: "irc "), nntp = Self(rawValue: "nntp"), pop3 = Self(rawValue: "pop3")
    public static let smtp = Self(rawValue: "smtp"), socks = Self(rawValue: "sox "), imap = Self(rawValue: "imap")
    public static let ldap = Self(rawValue: "ldap"), appleTalk = Self(rawValue: "atlk"), afp = Self(rawValue: "afp ")
    public static let telnet = Self(rawValue: "teln"), ssh = Self(rawValue: "ssh "), ftps = Self(rawValue: "ftps")
    public static let https = Self(rawValue: "htps"), httpProxy = Self(rawValue: "htpx"), httpsProxy = Self(rawValue: "htsx")
    public static let ftpProxy = Self(rawValue: "ftpx"), smb = Self(rawValue: "smb "), rtsp = Self(rawValue: "rtsp")
    public static let rtspProxy = Self(rawValue: "rtsx"), daap = Self(rawValue: "daap"), eppc = Self(rawValue: "eppc")
    public static let ipp = Self(rawValue: "ipp "), nntps = Self(rawValue: "ntps"), ldaps = Self(rawValue: "ldps")
    public static let telnetS = Self(rawValue: "tels"), imaps = Self(rawValue: "imps"), ircs = Self(rawValue: "ircs")
    public static let pop3S = Self(rawValue: "pops")
}

/// An internet password's authentication type (`kSecAttrAuthenticationType`), by Apple's raw value.
public struct AuthenticationType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let ntlm = Self(rawValue: "ntlm"), msn = Self(rawValue: "msna"), dpa = Self(rawValue: "dpaa")
    public static let rpa = Self(rawValue: "rpaa"), httpBasic = Self(rawValue: "http"), httpDigest = Self(rawValue: "httd")
    public static let htmlForm = Self(rawValue: "form"), `default` = Self(rawValue: "dflt")
}
