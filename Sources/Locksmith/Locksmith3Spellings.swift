// Locksmith 3's spellings (its README's: `.HTTPS`, `.AfterFirstUnlock`, `.NotFound`,
// `saveData(_:forUserAccount:)`), which Locksmith 4 renamed for Swift 3. Declared unavailable
// with the new name, so old code gets a fix-it instead of a bare "no member" error, as
// Locksmith 4 itself gave on Apple platforms.

extension LocksmithAccessibleOption {
    @available(*, unavailable, renamed: "afterFirstUnlock")
    public static var AfterFirstUnlock: Self { .afterFirstUnlock }
    @available(*, unavailable, renamed: "afterFirstUnlockThisDeviceOnly")
    public static var AfterFirstUnlockThisDeviceOnly: Self { .afterFirstUnlockThisDeviceOnly }
    @available(*, unavailable, renamed: "always")
    public static var Always: Self { .always }
    @available(*, unavailable, renamed: "alwaysThisDeviceOnly")
    public static var AlwaysThisDeviceOnly: Self { .alwaysThisDeviceOnly }
    @available(*, unavailable, renamed: "whenPasscodeSetThisDeviceOnly")
    public static var WhenPasscodeSetThisDeviceOnly: Self { .whenPasscodeSetThisDeviceOnly }
    @available(*, unavailable, renamed: "whenUnlocked")
    public static var WhenUnlocked: Self { .whenUnlocked }
    @available(*, unavailable, renamed: "whenUnlockedThisDeviceOnly")
    public static var WhenUnlockedThisDeviceOnly: Self { .whenUnlockedThisDeviceOnly }
}

extension LocksmithError {
    @available(*, unavailable, renamed: "allocate")
    public static var Allocate: Self { .allocate }
    @available(*, unavailable, renamed: "authFailed")
    public static var AuthFailed: Self { .authFailed }
    @available(*, unavailable, renamed: "decode")
    public static var Decode: Self { .decode }
    @available(*, unavailable, renamed: "duplicate")
    public static var Duplicate: Self { .duplicate }
    @available(*, unavailable, renamed: "interactionNotAllowed")
    public static var InteractionNotAllowed: Self { .interactionNotAllowed }
    @available(*, unavailable, renamed: "noError")
    public static var NoError: Self { .noError }
    @available(*, unavailable, renamed: "notAvailable")
    public static var NotAvailable: Self { .notAvailable }
    @available(*, unavailable, renamed: "notFound")
    public static var NotFound: Self { .notFound }
    @available(*, unavailable, renamed: "param")
    public static var Param: Self { .param }
    @available(*, unavailable, renamed: "requestNotSet")
    public static var RequestNotSet: Self { .requestNotSet }
    @available(*, unavailable, renamed: "typeNotFound")
    public static var TypeNotFound: Self { .typeNotFound }
    @available(*, unavailable, renamed: "unableToClear")
    public static var UnableToClear: Self { .unableToClear }
    @available(*, unavailable, renamed: "undefined")
    public static var Undefined: Self { .undefined }
    @available(*, unavailable, renamed: "unimplemented")
    public static var Unimplemented: Self { .unimplemented }
}

extension LocksmithInternetAuthenticationType {
    @available(*, unavailable, renamed: "default")
    public static var Default: Self { .`default` }
    @available(*, unavailable, renamed: "dpa")
    public static var DPA: Self { .dpa }
    @available(*, unavailable, renamed: "htmlForm")
    public static var HTMLForm: Self { .htmlForm }
    @available(*, unavailable, renamed: "httpBasic")
    public static var HTTPBasic: Self { .httpBasic }
    @available(*, unavailable, renamed: "httpDigest")
    public static var HTTPDigest: Self { .httpDigest }
    @available(*, unavailable, renamed: "msn")
    public static var MSN: Self { .msn }
    @available(*, unavailable, renamed: "ntlm")
    public static var NTLM: Self { .ntlm }
    @available(*, unavailable, renamed: "rpa")
    public static var RPA: Self { .rpa }
}

extension LocksmithInternetProtocol {
    @available(*, unavailable, renamed: "afp")
    public static var AFP: Self { .afp }
    @available(*, unavailable, renamed: "appleTalk")
    public static var AppleTalk: Self { .appleTalk }
    @available(*, unavailable, renamed: "daap")
    public static var DAAP: Self { .daap }
    @available(*, unavailable, renamed: "eppc")
    public static var EPPC: Self { .eppc }
    @available(*, unavailable, renamed: "ftp")
    public static var FTP: Self { .ftp }
    @available(*, unavailable, renamed: "ftpAccount")
    public static var FTPAccount: Self { .ftpAccount }
    @available(*, unavailable, renamed: "ftpProxy")
    public static var FTPProxy: Self { .ftpProxy }
    @available(*, unavailable, renamed: "ftps")
    public static var FTPS: Self { .ftps }
    @available(*, unavailable, renamed: "http")
    public static var HTTP: Self { .http }
    @available(*, unavailable, renamed: "httpProxy")
    public static var HTTPProxy: Self { .httpProxy }
    @available(*, unavailable, renamed: "https")
    public static var HTTPS: Self { .https }
    @available(*, unavailable, renamed: "httpsProxy")
    public static var HTTPSProxy: Self { .httpsProxy }
    @available(*, unavailable, renamed: "imap")
    public static var IMAP: Self { .imap }
    @available(*, unavailable, renamed: "imaps")
    public static var IMAPS: Self { .imaps }
    @available(*, unavailable, renamed: "ipp")
    public static var IPP: Self { .ipp }
    @available(*, unavailable, renamed: "irc")
    public static var IRC: Self { .irc }
    @available(*, unavailable, renamed: "ircs")
    public static var IRCS: Self { .ircs }
    @available(*, unavailable, renamed: "ldap")
    public static var LDAP: Self { .ldap }
    @available(*, unavailable, renamed: "ldaps")
    public static var LDAPS: Self { .ldaps }
    @available(*, unavailable, renamed: "nntp")
    public static var NNTP: Self { .nntp }
    @available(*, unavailable, renamed: "nntps")
    public static var NNTPS: Self { .nntps }
    @available(*, unavailable, renamed: "pop3")
    public static var POP3: Self { .pop3 }
    @available(*, unavailable, renamed: "pop3S")
    public static var POP3S: Self { .pop3S }
    @available(*, unavailable, renamed: "rtsp")
    public static var RTSP: Self { .rtsp }
    @available(*, unavailable, renamed: "rtspProxy")
    public static var RTSPProxy: Self { .rtspProxy }
    @available(*, unavailable, renamed: "smb")
    public static var SMB: Self { .smb }
    @available(*, unavailable, renamed: "smtp")
    public static var SMTP: Self { .smtp }
    @available(*, unavailable, renamed: "socks")
    public static var SOCKS: Self { .socks }
    @available(*, unavailable, renamed: "ssh")
    public static var SSH: Self { .ssh }
    @available(*, unavailable, renamed: "telnet")
    public static var Telnet: Self { .telnet }
    @available(*, unavailable, renamed: "telnetS")
    public static var TelnetS: Self { .telnetS }
}

extension LocksmithSecurityClass {
    @available(*, unavailable, renamed: "genericPassword")
    public static var GenericPassword: Self { .genericPassword }
    @available(*, unavailable, renamed: "internetPassword")
    public static var InternetPassword: Self { .internetPassword }
    @available(*, unavailable, renamed: "certificate")
    public static var Certificate: Self { .certificate }
    @available(*, unavailable, renamed: "key")
    public static var Key: Self { .key }
    @available(*, unavailable, renamed: "identity")
    public static var Identity: Self { .identity }
}

extension Locksmith {
    @available(*, unavailable, renamed: "saveData(data:forUserAccount:inService:)")
    public static func saveData(_ data: [String: Any], forUserAccount userAccount: String, inService service: String = LocksmithDefaultService) throws {
        try saveData(data: data, forUserAccount: userAccount, inService: service)
    }

    @available(*, unavailable, renamed: "loadDataForUserAccount(userAccount:inService:)")
    public static func loadDataForUserAccount(_ userAccount: String, inService service: String = LocksmithDefaultService) -> [String: Any]? {
        loadDataForUserAccount(userAccount: userAccount, inService: service)
    }

    @available(*, unavailable, renamed: "updateData(data:forUserAccount:inService:)")
    public static func updateData(_ data: [String: Any], forUserAccount userAccount: String, inService service: String = LocksmithDefaultService) throws {
        try updateData(data: data, forUserAccount: userAccount, inService: service)
    }

    @available(*, unavailable, renamed: "deleteDataForUserAccount(userAccount:inService:)")
    public static func deleteDataForUserAccount(_ userAccount: String, inService service: String = LocksmithDefaultService) throws {
        try deleteDataForUserAccount(userAccount: userAccount, inService: service)
    }
}
