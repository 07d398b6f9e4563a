import KeychainCore

/// The `--protocol` values the command takes: Apple's four-character `kSecAttrProtocol` codes,
/// and familiar names for them (`https` is `htps`, `ftp` is `ftp `). An item stored under any
/// other string would be one Apple-shaped code never finds, and a typo would make a second
/// item for the same login, so anything else is refused with this list.
enum ProtocolNames {
    /// Each familiar name with its code, in the order the help lists them.
    static let table: [(name: String, code: InternetProtocol)] = [
        ("https", .https), ("http", .http), ("ftp", .ftp), ("ftps", .ftps), ("ftpaccount", .ftpAccount), ("ssh", .ssh),
        ("smtp", .smtp), ("imap", .imap), ("imaps", .imaps), ("pop3", .pop3), ("pop3s", .pop3S), ("ldap", .ldap),
        ("ldaps", .ldaps), ("irc", .irc), ("ircs", .ircs), ("nntp", .nntp), ("nntps", .nntps), ("telnet", .telnet),
        ("telnets", .telnetS), ("smb", .smb), ("afp", .afp), ("appletalk", .appleTalk), ("socks", .socks),
        ("httpproxy", .httpProxy), ("httpsproxy", .httpsProxy), ("ftpproxy", .ftpProxy), ("rtsp", .rtsp),
        ("rtspproxy", .rtspProxy), ("daap", .daap), ("eppc", .eppc), ("ipp", .ipp),
    ]

    /// The protocol `text` names: a familiar name (any case) or Apple's exact code.
    static func code(_ text: String) throws(CommandFailure) -> InternetProtocol {
        let lowered = text.lowercased()
        if let entry = table.first(where: { $0.name == lowered }) { return entry.code }
        if let entry = table.first(where: { $0.code.rawValue == text }) { return entry.code }
        throw CommandFailure(
            "unknown protocol '\(text)': give one of \(table.map(\.name).joined(separator: ", ")) (or its four-character code, such as htps)",
            code: .usage)
    }

    /// How a listing shows `code`: its familiar name, or the code as stored (an item another
    /// program wrote) in quotes.
    static func name(of code: InternetProtocol) -> String {
        table.first { $0.code == code }?.name ?? "'\(code.rawValue)'"
    }
}
