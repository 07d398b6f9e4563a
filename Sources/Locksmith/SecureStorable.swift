import Foundation
import KeychainCore

/// A type whose values can be kept in the keychain. The capabilities (``CreateableSecureStorable``,
/// ``ReadableSecureStorable``, ``DeleteableSecureStorable``) and the item kinds
/// (``GenericPasswordSecureStorable``, ``InternetPasswordSecureStorable``) build on it.
public protocol SecureStorable {
    /// When the item can be read; nil for the keychain's default (`whenUnlocked`).
    var accessible: LocksmithAccessibleOption? { get }
    /// The access group shared with other programs of the user; nil for none.
    var accessGroup: String? { get }
}

public extension SecureStorable {
    var accessible: LocksmithAccessibleOption? { nil }
    var accessGroup: String? { nil }

    /// `pdmn` and `agrp`, those that are set.
    var secureStorableBaseStoragePropertyDictionary: [String: Any] {
        var d: [String: Any] = [:]
        d["pdmn"] = accessible?.rawValue
        d["agrp"] = accessGroup
        return d
    }
}

// MARK: Attribute mixins (a required `account`, optional metadata that defaults to nil)

public protocol AccountBasedSecureStorable { var account: String { get } }
public protocol DescribableSecureStorable { var description: String? { get } }
public protocol CommentableSecureStorable { var comment: String? { get } }
public protocol CreatorDesignatableSecureStorable { var creator: UInt? { get } }
public protocol LabellableSecureStorable { var label: String? { get } }
public protocol TypeDesignatableSecureStorable { var type: UInt? { get } }
public protocol IsInvisibleAssignableSecureStorable { var isInvisible: Bool? { get } }
public protocol IsNegativeAssignableSecureStorable { var isNegative: Bool? { get } }

public extension DescribableSecureStorable { var description: String? { nil } }
public extension CommentableSecureStorable { var comment: String? { nil } }
public extension CreatorDesignatableSecureStorable { var creator: UInt? { nil } }
public extension LabellableSecureStorable { var label: String? { nil } }
public extension TypeDesignatableSecureStorable { var type: UInt? { nil } }
public extension IsInvisibleAssignableSecureStorable { var isInvisible: Bool? { nil } }
public extension IsNegativeAssignableSecureStorable { var isNegative: Bool? { nil } }

// MARK: Item kinds

/// A generic password: an account in a service, with optional metadata.
///
/// As in Locksmith, an optional property must be declared with exactly the protocol's type
/// (`var comment: String?`, `var generic: NSData?`) to be used; another type is ignored.
public protocol GenericPasswordSecureStorable: AccountBasedSecureStorable, DescribableSecureStorable, CommentableSecureStorable,
    CreatorDesignatableSecureStorable, LabellableSecureStorable, TypeDesignatableSecureStorable,
    IsInvisibleAssignableSecureStorable, IsNegativeAssignableSecureStorable
{
    var service: String { get }
    var generic: NSData? { get }
}

public extension GenericPasswordSecureStorable {
    var generic: NSData? { nil }
}

/// An internet password: an account on a server, port, protocol and authentication scheme.
public protocol InternetPasswordSecureStorable: AccountBasedSecureStorable, DescribableSecureStorable, CommentableSecureStorable,
    CreatorDesignatableSecureStorable, TypeDesignatableSecureStorable, IsInvisibleAssignableSecureStorable,
    IsNegativeAssignableSecureStorable
{
    var server: String { get }
    var port: Int { get }
    var internetProtocol: LocksmithInternetProtocol { get }
    var authenticationType: LocksmithInternetAuthenticationType { get }
    var securityDomain: String? { get }
    var path: String? { get }
}

public extension InternetPasswordSecureStorable {
    var securityDomain: String? { nil }
    var path: String? { nil }
}

/// Markers kept from Locksmith, which never implemented them: only passwords can be stored.
public protocol CertificateSecureStorable: SecureStorable {}
public protocol KeySecureStorable: SecureStorable {}

// MARK: The item a conforming value describes

extension SecureStorable {
    /// The core item for this value: its class and every attribute it sets (accessibility and
    /// access group too, for internet passwords, which Locksmith dropped), and the payload.
    func keychainItem(payload: Data? = nil) throws(LocksmithError) -> Item {
        var attributes = Attributes(accessGroup: accessGroup, accessibility: accessible.map { Accessibility(rawValue: $0.rawValue)! })
        let itemClass: ItemClass
        if let generic = self as? any GenericPasswordSecureStorable {
            itemClass = .genericPassword
            attributes.service = generic.service
            attributes.account = generic.account
            attributes.label = generic.label
            attributes.generic = generic.generic.map { Data(referencing: $0) }
            describe(generic, into: &attributes)
        } else if let internet = self as? any InternetPasswordSecureStorable {
            itemClass = .internetPassword
            attributes.server = internet.server
            attributes.port = internet.port
            attributes.protocol = InternetProtocol(rawValue: internet.internetProtocol.rawValue)
            attributes.authenticationType = AuthenticationType(rawValue: internet.authenticationType.rawValue)
            attributes.securityDomain = internet.securityDomain
            attributes.path = internet.path
            attributes.account = internet.account
            describe(internet, into: &attributes)
        } else {
            throw .typeNotFound
        }
        return Item(itemClass, attributes: attributes, value: payload.map { SecretBytes($0) })
    }

    private func describe(
        _ value: some DescribableSecureStorable & CommentableSecureStorable & CreatorDesignatableSecureStorable
            & TypeDesignatableSecureStorable & IsInvisibleAssignableSecureStorable & IsNegativeAssignableSecureStorable,
        into attributes: inout Attributes
    ) {
        attributes.description = value.description
        attributes.comment = value.comment
        attributes.creator = value.creator.flatMap { UInt32(exactly: $0) }
        attributes.type = value.type.flatMap { UInt32(exactly: $0) }
        attributes.isInvisible = value.isInvisible
        attributes.isNegative = value.isNegative
    }
}
