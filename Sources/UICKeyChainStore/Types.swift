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
    /// A generic password (`kSecClassGenericPassword`), addressed by service and key.
    case genericPassword = 1
    /// An internet password (`kSecClassInternetPassword`), addressed by server, protocol and key.
    case internetPassword
}

/// An internet password's protocol (`kSecAttrProtocol`).
public enum UICKeyChainStoreProtocolType: Int, Sendable, CaseIterable {
    // Spelled as Swift imports the header: a lone acronym stays (`HTTPS`), a leading acronym
    // followed by a word is lowercased (`httpProxy`).
    /// The protocol of Apple's `kSecAttrProtocol` value of the same name (`kSecAttrProtocolFTP`...).
    case FTP = 1, ftpAccount, HTTP, IRC, NNTP, POP3, SMTP, SOCKS, IMAP, LDAP, appleTalk, AFP, telnet, SSH, FTPS, HTTPS
    /// Apple's internet protocols of the same names (`kSecAttrProtocol...`).
    case httpProxy, httpsProxy, ftpProxy, SMB, RTSP, rtspProxy, DAAP, EPPC, NNTPS, LDAPS, telnetS, IRCS, POP3S

    var coreValue: InternetProtocol {
        switch self {
        case .FTP: .ftp
        case .ftpAccount: .ftpAccount
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
        case .httpProxy: .httpProxy
        case .httpsProxy: .httpsProxy
        case .ftpProxy: .ftpProxy
        case .SMB: .smb
        case .RTSP: .rtsp
        case .rtspProxy: .rtspProxy
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
    /// Apple's authentication schemes of the same names (`kSecAttrAuthenticationType...`).
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
    /// Apple's accessibility classes of the same names (`kSecAttrAccessible...`).
    case whenUnlocked = 1, afterFirstUnlock, always, whenPasscodeSetThisDeviceOnly, whenUnlockedThisDeviceOnly
    /// Apple's accessibility classes of the same names (`kSecAttrAccessible...`).
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

/// What a read must prove (`SecAccessControlCreateFlags`), as Swift imports the header's
/// `NS_ENUM`: one policy at a time, `init?(rawValue:)` nil for any other value. On Linux,
/// `userPresence` and `devicePasscode` ask for the vault passphrase through the presence
/// authenticator; the Touch ID cases need a biometric authenticator. The combinators and
/// key-usage flags have no meaning for passwords and are refused when writing.
public enum UICKeyChainStoreAuthenticationPolicy: UInt, Sendable {
    /// Any proof of presence: here, the vault passphrase.
    case userPresence = 1
    /// Any enrolled fingerprint: needs a biometric authenticator.
    case touchIDAny = 2
    /// The fingerprints enrolled now: needs a biometric authenticator.
    case touchIDCurrentSet = 8
    /// The device passcode: here, the vault passphrase.
    case devicePasscode = 16
    /// A combinator of Apple's flags; refused when writing.
    case controlOr = 16_384
    /// A combinator of Apple's flags; refused when writing.
    case controlAnd = 32_768
    /// A key-usage flag with no meaning for passwords; refused when writing.
    case privateKeyUsage = 1_073_741_824
    /// An application password, which Linux has no way to ask for; refused when writing.
    case applicationPassword = 2_147_483_648

    /// The core's access control for this policy; nil for one the vault cannot honour.
    var coreValue: AccessControl? {
        switch self {
        case .userPresence: .userPresence
        case .touchIDAny: .biometryAny
        case .touchIDCurrentSet: .biometryCurrentSet
        case .devicePasscode: .devicePasscode
        case .controlOr, .controlAnd, .privateKeyUsage, .applicationPassword: nil
        }
    }
}
