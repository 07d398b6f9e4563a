import Foundation
import KeychainCore

/// The error domain of every error this module reports.
public let UICKeyChainStoreErrorDomain = "com.kishikawakatsumi.uickeychainstore"

/// UICKeyChainStore's own error code (others are keychain status codes, listed in the README).
public enum UICKeyChainStoreErrorCode: Int, Sendable {
    /// A nil or empty key, or another malformed argument.
    case invalidArguments = 1
}

/// The kind of item a store keeps.
public enum UICKeyChainStoreItemClass: Int, Sendable {
    case genericPassword = 1
    case internetPassword
}

/// An internet password's protocol (`kSecAttrProtocol`).
public enum UICKeyChainStoreProtocolType: Int, Sendable, CaseIterable {
    case FTP = 1, FTPAccount, HTTP, IRC, NNTP, POP3, SMTP, SOCKS, IMAP, LDAP, appleTalk, AFP, telnet, SSH, FTPS, HTTPS
    case HTTPProxy, HTTPSProxy, FTPProxy, SMB, RTSP, RTSPProxy, DAAP, EPPC, NNTPS, LDAPS, telnetS, IRCS, POP3S

    var coreValue: InternetProtocol {
        switch self {
        case .FTP: .ftp
        case .FTPAccount: .ftpAccount
        case .HTTP: .http
        case .IRC: .irc
        case .NNTP: .nntp
        case .POP3: .pop3
        case .SMTP: .smtp
        case .SOCKS: .socks
        case .IMAP: .imap
        case .LDAP: .ldap
        case .appleTalk: .appleTalk
        case .AFP: .afp
        case .telnet: .telnet
        case .SSH: .ssh
        case .FTPS: .ftps
        case .HTTPS: .https
        case .HTTPProxy: .httpProxy
        case .HTTPSProxy: .httpsProxy
        case .FTPProxy: .ftpProxy
        case .SMB: .smb
        case .RTSP: .rtsp
        case .RTSPProxy: .rtspProxy
        case .DAAP: .daap
        case .EPPC: .eppc
        case .NNTPS: .nntps
        case .LDAPS: .ldaps
        case .telnetS: .telnetS
        case .IRCS: .ircs
        case .POP3S: .pop3S
        }
    }
}

/// An internet password's authentication scheme (`kSecAttrAuthenticationType`).
public enum UICKeyChainStoreAuthenticationType: Int, Sendable, CaseIterable {
    case NTLM = 1, MSN, DPA, RPA, httpBasic, httpDigest, htmlForm, `default`

    var coreValue: AuthenticationType {
        switch self {
        case .NTLM: .ntlm
        case .MSN: .msn
        case .DPA: .dpa
        case .RPA: .rpa
        case .httpBasic: .httpBasic
        case .httpDigest: .httpDigest
        case .htmlForm: .htmlForm
        case .default: .default
        }
    }
}

/// When an item can be read (`kSecAttrAccessible`); see the README's accessibility table for the
/// meaning each has in the vault.
public enum UICKeyChainStoreAccessibility: Int, Sendable, CaseIterable {
    case whenUnlocked = 1, afterFirstUnlock, always, whenPasscodeSetThisDeviceOnly, whenUnlockedThisDeviceOnly
    case afterFirstUnlockThisDeviceOnly, alwaysThisDeviceOnly

    var coreValue: Accessibility {
        switch self {
        case .whenUnlocked: .whenUnlocked
        case .afterFirstUnlock: .afterFirstUnlock
        case .always: .always
        case .whenPasscodeSetThisDeviceOnly: .whenPasscodeSetThisDeviceOnly
        case .whenUnlockedThisDeviceOnly: .whenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: .afterFirstUnlockThisDeviceOnly
        case .alwaysThisDeviceOnly: .alwaysThisDeviceOnly
        }
    }
}

/// What a read must prove (`SecAccessControlCreateFlags`). On Linux, `userPresence` and
/// `devicePasscode` ask for the vault passphrase through the presence authenticator; the
/// Touch ID flags need a biometric authenticator. The combinators and key-usage flags have no
/// meaning for passwords and are refused.
public struct UICKeyChainStoreAuthenticationPolicy: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let userPresence = Self(rawValue: 1 << 0)
    public static let touchIDAny = Self(rawValue: 1 << 1)
    public static let touchIDCurrentSet = Self(rawValue: 1 << 3)
    public static let devicePasscode = Self(rawValue: 1 << 4)
    public static let controlOr = Self(rawValue: 1 << 14)
    public static let controlAnd = Self(rawValue: 1 << 15)
    public static let privateKeyUsage = Self(rawValue: 1 << 30)
    public static let applicationPassword = Self(rawValue: 1 << 31)

    /// The core's access control for this policy; nil for none (or for a combination the vault
    /// cannot honour, which writes then refuse).
    var coreValue: AccessControl? {
        switch self {
        case []: nil
        case .userPresence: .userPresence
        case .touchIDAny: .biometryAny
        case .touchIDCurrentSet: .biometryCurrentSet
        case .devicePasscode: .devicePasscode
        default: nil
        }
    }
}
