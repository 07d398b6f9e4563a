import Foundation

/// What a read returns: the item's attribute dictionary (Apple's raw keys) and its payload.
public protocol SecureStorableResultType: SecureStorable {
    /// The attributes as the keychain returned them, under Apple's raw keys (`acct`, `svce`...).
    var resultDictionary: [String: Any] { get }
    /// The payload, decoded from its keyed archive; nil if it is not one.
    var data: [String: Any]? { get }
}

public extension SecureStorableResultType {
    /// The attributes as the keychain returned them, under Apple's raw keys (`acct`, `svce`...).
    var resultDictionary: [String: Any] { [:] }
    var data: [String: Any]? { (resultDictionary["v_Data"] as? Data).flatMap(PayloadArchive.decode) }
    var accessible: LocksmithAccessibleOption? { (resultDictionary["pdmn"] as? String).flatMap(LocksmithAccessibleOption.init(rawValue:)) }
    var accessGroup: String? { resultDictionary["agrp"] as? String }
}

/// A read result that carries the attribute of ``AccountBasedSecureStorable``.
public protocol AccountBasedSecureStorableResultType: AccountBasedSecureStorable, SecureStorableResultType {}
/// A read result that carries the attribute of ``DescribableSecureStorable``.
public protocol DescribableSecureStorableResultType: DescribableSecureStorable, SecureStorableResultType {}
/// A read result that carries the attribute of ``CommentableSecureStorable``.
public protocol CommentableSecureStorableResultType: CommentableSecureStorable, SecureStorableResultType {}
/// A read result that carries the attribute of ``CreatorDesignatableSecureStorable``.
public protocol CreatorDesignatableSecureStorableResultType: CreatorDesignatableSecureStorable, SecureStorableResultType {}
/// A read result that carries the attribute of ``LabellableSecureStorable``.
public protocol LabellableSecureStorableResultType: LabellableSecureStorable, SecureStorableResultType {}
/// A read result that carries the attribute of ``TypeDesignatableSecureStorable``.
public protocol TypeDesignatableSecureStorableResultType: TypeDesignatableSecureStorable, SecureStorableResultType {}
/// A read result that carries the attribute of ``IsInvisibleAssignableSecureStorable``.
public protocol IsInvisibleAssignableSecureStorableResultType: IsInvisibleAssignableSecureStorable, SecureStorableResultType {}
/// A read result that carries the attribute of ``IsNegativeAssignableSecureStorable``.
public protocol IsNegativeAssignableSecureStorableResultType: IsNegativeAssignableSecureStorable, SecureStorableResultType {}

public extension AccountBasedSecureStorableResultType {
    /// The account the item belongs to (`kSecAttrAccount`).
    var account: String { resultDictionary["acct"] as? String ?? "" }
}
public extension DescribableSecureStorableResultType {
    /// A description of the item's kind (`kSecAttrDescription`); nil for none.
    var description: String? { resultDictionary["desc"] as? String }
}
public extension CommentableSecureStorableResultType {
    /// A comment on the item (`kSecAttrComment`); nil for none.
    var comment: String? { resultDictionary["icmt"] as? String }
}
public extension CreatorDesignatableSecureStorableResultType {
    /// The item's creator code (`kSecAttrCreator`); nil for none.
    var creator: UInt? { resultDictionary["crtr"] as? UInt }
}
public extension LabellableSecureStorableResultType {
    /// The label keychain browsers show (`kSecAttrLabel`); nil for none.
    var label: String? { resultDictionary["labl"] as? String }
}
public extension TypeDesignatableSecureStorableResultType {
    /// The item's type code (`kSecAttrType`); nil for none.
    var type: UInt? { resultDictionary["type"] as? UInt }
}
public extension IsInvisibleAssignableSecureStorableResultType {
    /// Whether keychain browsers hide the item (`kSecAttrIsInvisible`); nil when not set.
    var isInvisible: Bool? { resultDictionary["invi"] as? Bool }
}
public extension IsNegativeAssignableSecureStorableResultType {
    /// Whether the item is a negative entry, a password the user chose not to store (`kSecAttrIsNegative`); nil when not set.
    var isNegative: Bool? { resultDictionary["nega"] as? Bool }
}

/// A generic password as read back, every attribute typed.
public protocol GenericPasswordSecureStorableResultType: GenericPasswordSecureStorable, AccountBasedSecureStorableResultType,
    DescribableSecureStorableResultType, CommentableSecureStorableResultType, CreatorDesignatableSecureStorableResultType,
    LabellableSecureStorableResultType, TypeDesignatableSecureStorableResultType, IsInvisibleAssignableSecureStorableResultType,
    IsNegativeAssignableSecureStorableResultType
{}

public extension GenericPasswordSecureStorableResultType {
    /// The service the password is for (`kSecAttrService`).
    var service: String { resultDictionary["svce"] as? String ?? "" }
    /// Generic data stored with the password in clear metadata (`kSecAttrGeneric`); nil for none.
    var generic: NSData? { (resultDictionary["gena"] as? Data).map { NSData(data: $0) } }
}

/// An internet password as read back: an `Int` port, a ``LocksmithInternetProtocol``...
public protocol InternetPasswordSecureStorableResultType: InternetPasswordSecureStorable, AccountBasedSecureStorableResultType,
    DescribableSecureStorableResultType, CommentableSecureStorableResultType, CreatorDesignatableSecureStorableResultType,
    TypeDesignatableSecureStorableResultType, IsInvisibleAssignableSecureStorableResultType, IsNegativeAssignableSecureStorableResultType
{}

public extension InternetPasswordSecureStorableResultType {
    /// The server the password is for (`kSecAttrServer`).
    var server: String { resultDictionary["srvr"] as? String ?? "" }
    /// The server's port (`kSecAttrPort`).
    var port: Int { resultDictionary["port"] as? Int ?? 0 }
    /// The protocol (`kSecAttrProtocol`).
    var internetProtocol: LocksmithInternetProtocol { LocksmithInternetProtocol(rawValue: resultDictionary["ptcl"] as? String ?? "")! }
    /// The authentication scheme (`kSecAttrAuthenticationType`).
    var authenticationType: LocksmithInternetAuthenticationType {
        LocksmithInternetAuthenticationType(rawValue: resultDictionary["atyp"] as? String ?? "")!
    }
    /// The security domain, such as an HTTP realm (`kSecAttrSecurityDomain`); nil for none.
    var securityDomain: String? { (resultDictionary["sdmn"] as? String).flatMap { $0.isEmpty ? nil : $0 } }
    /// The path on the server (`kSecAttrPath`); nil for none.
    var path: String? { (resultDictionary["path"] as? String).flatMap { $0.isEmpty ? nil : $0 } }
}

struct GenericPasswordResult: GenericPasswordSecureStorableResultType {
    let resultDictionary: [String: Any]
}

struct InternetPasswordResult: InternetPasswordSecureStorableResultType {
    let resultDictionary: [String: Any]
}
