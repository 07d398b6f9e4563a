import Foundation

/// What a read returns: the item's attribute dictionary (Apple's raw keys) and its payload.
public protocol SecureStorableResultType: SecureStorable {
    var resultDictionary: [String: Any] { get }
    /// The payload, decoded from its keyed archive; nil if it is not one.
    var data: [String: Any]? { get }
}

public extension SecureStorableResultType {
    var resultDictionary: [String: Any] { [:] }
    var data: [String: Any]? { (resultDictionary["v_Data"] as? Data).flatMap(PayloadArchive.decode) }
    var accessible: LocksmithAccessibleOption? { (resultDictionary["pdmn"] as? String).flatMap(LocksmithAccessibleOption.init(rawValue:)) }
    var accessGroup: String? { resultDictionary["agrp"] as? String }
}

public protocol AccountBasedSecureStorableResultType: AccountBasedSecureStorable, SecureStorableResultType {}
public protocol DescribableSecureStorableResultType: DescribableSecureStorable, SecureStorableResultType {}
public protocol CommentableSecureStorableResultType: CommentableSecureStorable, SecureStorableResultType {}
public protocol CreatorDesignatableSecureStorableResultType: CreatorDesignatableSecureStorable, SecureStorableResultType {}
public protocol LabellableSecureStorableResultType: LabellableSecureStorable, SecureStorableResultType {}
public protocol TypeDesignatableSecureStorableResultType: TypeDesignatableSecureStorable, SecureStorableResultType {}
public protocol IsInvisibleAssignableSecureStorableResultType: IsInvisibleAssignableSecureStorable, SecureStorableResultType {}
public protocol IsNegativeAssignableSecureStorableResultType: IsNegativeAssignableSecureStorable, SecureStorableResultType {}

public extension AccountBasedSecureStorableResultType { var account: String { resultDictionary["acct"] as? String ?? "" } }
public extension DescribableSecureStorableResultType { var description: String? { resultDictionary["desc"] as? String } }
public extension CommentableSecureStorableResultType { var comment: String? { resultDictionary["icmt"] as? String } }
public extension CreatorDesignatableSecureStorableResultType { var creator: UInt? { resultDictionary["crtr"] as? UInt } }
public extension LabellableSecureStorableResultType { var label: String? { resultDictionary["labl"] as? String } }
public extension TypeDesignatableSecureStorableResultType { var type: UInt? { resultDictionary["type"] as? UInt } }
public extension IsInvisibleAssignableSecureStorableResultType { var isInvisible: Bool? { resultDictionary["invi"] as? Bool } }
public extension IsNegativeAssignableSecureStorableResultType { var isNegative: Bool? { resultDictionary["nega"] as? Bool } }

/// A generic password as read back, every attribute typed.
public protocol GenericPasswordSecureStorableResultType: GenericPasswordSecureStorable, AccountBasedSecureStorableResultType,
    DescribableSecureStorableResultType, CommentableSecureStorableResultType, CreatorDesignatableSecureStorableResultType,
    LabellableSecureStorableResultType, TypeDesignatableSecureStorableResultType, IsInvisibleAssignableSecureStorableResultType,
    IsNegativeAssignableSecureStorableResultType
{}

public extension GenericPasswordSecureStorableResultType {
    var service: String { resultDictionary["svce"] as? String ?? "" }
    var generic: NSData? { (resultDictionary["gena"] as? Data).map { NSData(data: $0) } }
}

/// An internet password as read back: an `Int` port, a ``LocksmithInternetProtocol``...
public protocol InternetPasswordSecureStorableResultType: InternetPasswordSecureStorable, AccountBasedSecureStorableResultType,
    DescribableSecureStorableResultType, CommentableSecureStorableResultType, CreatorDesignatableSecureStorableResultType,
    TypeDesignatableSecureStorableResultType, IsInvisibleAssignableSecureStorableResultType, IsNegativeAssignableSecureStorableResultType
{}

public extension InternetPasswordSecureStorableResultType {
    var server: String { resultDictionary["srvr"] as? String ?? "" }
    var port: Int { resultDictionary["port"] as? Int ?? 0 }
    var internetProtocol: LocksmithInternetProtocol { LocksmithInternetProtocol(rawValue: resultDictionary["ptcl"] as? String ?? "")! }
    var authenticationType: LocksmithInternetAuthenticationType {
        LocksmithInternetAuthenticationType(rawValue: resultDictionary["atyp"] as? String ?? "")!
    }
    var securityDomain: String? { (resultDictionary["sdmn"] as? String).flatMap { $0.isEmpty ? nil : $0 } }
    var path: String? { (resultDictionary["path"] as? String).flatMap { $0.isEmpty ? nil : $0 } }
}

struct GenericPasswordResult: GenericPasswordSecureStorableResultType {
    let resultDictionary: [String: Any]
}

struct InternetPasswordResult: InternetPasswordSecureStorableResultType {
    let resultDictionary: [String: Any]
}
