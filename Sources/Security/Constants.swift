import Foundation

// Apple's names for the keychain's keys and values, with Apple's raw values, so that an item's
// attribute dictionary reads the same as on Apple platforms. Constants of a non-Sendable class
// (NSString), never mutated: nonisolated(unsafe).

/// The item class key. (`"class"`)
nonisolated(unsafe) public let kSecClass: CFString = "class"
/// A generic password. (`"genp"`)
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
/// An internet password. (`"inet"`)
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
/// A certificate (not supported here: errSecUnimplemented). (`"cert"`)
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
/// A cryptographic key (not supported here). (`"keys"`)
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
/// An identity (not supported here). (`"idnt"`)
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"
/// When the item can be read (one of the kSecAttrAccessible values). (`"pdmn"`)
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
/// The item's SecAccessControl. (`"accc"`)
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
/// The access group. (`"agrp"`)
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
/// Whether the item is synchronizable (a boolean, or kSecAttrSynchronizableAny in queries). (`"sync"`)
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
/// In a query: synchronizable items and others alike. (`"syna"`)
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"
/// When the item was created (read only). (`"cdat"`)
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
/// When the item was last changed (read only). (`"mdat"`)
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
/// A description. (`"desc"`)
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
/// A comment. (`"icmt"`)
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
/// A creator code (a number). (`"crtr"`)
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
/// A type code (a number). (`"type"`)
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
/// A label. (`"labl"`)
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
/// Whether the item is invisible. (`"invi"`)
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a negative entry. (`"nega"`)
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
/// The account. (`"acct"`)
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
/// A generic password's service. (`"svce"`)
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
/// A generic password's opaque data. (`"gena"`)
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
/// An internet password's security domain. (`"sdmn"`)
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
/// An internet password's server. (`"srvr"`)
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
/// An internet password's protocol (one of the kSecAttrProtocol values). (`"ptcl"`)
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
/// An internet password's authentication type. (`"atyp"`)
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
/// An internet password's port. (`"port"`)
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
/// An internet password's path. (`"path"`)
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"
/// Readable while unlocked. (`"ak"`)
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// Readable after the first unlock until reboot. (`"ck"`)
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// Always readable (deprecated by Apple). (`"dk"`)
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
/// Readable while unlocked, on this device only. (`"aku"`)
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// Readable after the first unlock, on this device only. (`"cku"`)
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// Always readable, on this device only (deprecated by Apple). (`"dku"`)
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"
/// Readable while unlocked, only while a passphrase is set, on this device only. (`"akpu"`)
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
/// How many items a search returns. (`"m_Limit"`)
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
/// The first match. (`"m_LimitOne"`)
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Every match. (`"m_LimitAll"`)
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
/// Return the item's data. (`"r_Data"`)
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
/// Return the item's attributes. (`"r_Attributes"`)
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
/// Return a reference (not supported for passwords here). (`"r_Ref"`)
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
/// Return a persistent reference (not supported here). (`"r_PersistentRef"`)
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// The item's data. (`"v_Data"`)
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
/// A reference to the item (not supported here). (`"v_Ref"`)
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
/// A persistent reference (not supported here). (`"v_PersistentRef"`)
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// The prompt shown when a proof of presence is asked for. (`"u_OpPrompt"`)
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// Fail rather than ask for a proof of presence (deprecated by Apple). (`"u_NoAuthUI"`)
nonisolated(unsafe) public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
/// Whether a proof of presence may be asked for (one of the kSecUseAuthenticationUI values). (`"u_AuthUI"`)
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// The LAContext that gives the proof of presence. (`"u_AuthCtx"`)
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
/// Ask for a proof when needed. (`"u_AuthUIA"`)
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Fail with errSecInteractionNotAllowed instead of asking. (`"u_AuthUIF"`)
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Skip items that need a proof. (`"u_AuthUIS"`)
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// Use the data-protection keychain (always so here). (`"nleg"`)
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// The FTP protocol (`"ftp "`).
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
/// The FTPAccount protocol (`"ftpa"`).
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
/// The HTTP protocol (`"http"`).
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
/// The IRC protocol (`"irc "`).
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
/// The NNTP protocol (`"nntp"`).
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
/// The POP3 protocol (`"pop3"`).
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
/// The SMTP protocol (`"smtp"`).
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
/// The SOCKS protocol (`"sox "`).
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
/// The IMAP protocol (`"imap"`).
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
/// The LDAP protocol (`"ldap"`).
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
/// The AppleTalk protocol (`"atlk"`).
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
/// The AFP protocol (`"afp "`).
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
/// The Telnet protocol (`"teln"`).
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
/// The SSH protocol (`"ssh "`).
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
/// The FTPS protocol (`"ftps"`).
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
/// The HTTPS protocol (`"htps"`).
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
/// The HTTPProxy protocol (`"htpx"`).
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
/// The HTTPSProxy protocol (`"htsx"`).
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
/// The FTPProxy protocol (`"ftpx"`).
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
/// The SMB protocol (`"smb "`).
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
/// The RTSP protocol (`"rtsp"`).
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
/// The RTSPProxy protocol (`"rtsx"`).
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
/// The DAAP protocol (`"daap"`).
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
/// The EPPC protocol (`"eppc"`).
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
/// The IPP protocol (`"ipp "`).
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
/// The NNTPS protocol (`"ntps"`).
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
/// The LDAPS protocol (`"ldps"`).
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
/// The TelnetS protocol (`"tels"`).
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
/// The IMAPS protocol (`"imps"`).
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
/// The IRCS protocol (`"ircs"`).
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
/// The POP3S protocol (`"pops"`).
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"
/// The NTLM authentication type (`"ntlm"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
/// The MSN authentication type (`"msna"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
/// The DPA authentication type (`"dpaa"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
/// The RPA authentication type (`"rpaa"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
/// The HTTPBasic authentication type (`"http"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// The HTTPDigest authentication type (`"httd"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
/// The HTMLForm authentication type (`"form"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// The Default authentication type (`"dflt"`).
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"
