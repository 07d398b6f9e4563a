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

/// A storable type with an account (`account`).
public protocol AccountBasedSecureStorable {
    /// The account the item belongs to (`kSecAttrAccount`).
    var account: String { get }
}
/// A storable type with a description (`description`).
public protocol DescribableSecureStorable {
    /// A description of the item's kind (`kSecAttrDescription`); nil for none.
    var description: String? { get }
}
/// A storable type with a comment (`comment`).
public protocol CommentableSecureStorable {
    /// A comment on the item (`kSecAttrComment`); nil for none.
    var comment: String? { get }
}
/// A storable type with a creator code (`creator`).
public protocol CreatorDesignatableSecureStorable {
    /// The item's creator code (`kSecAttrCreator`); nil for none.
    var creator: UInt? { get }
}
/// A storable type with a label (`label`).
public protocol LabellableSecureStorable {
    /// The label keychain browsers show (`kSecAttrLabel`); nil for none.
    var label: String? { get }
}
/// A storable type with a type code (`type`).
public protocol TypeDesignatableSecureStorable {
    /// The item's type code (`kSecAttrType`); nil for none.
    var type: UInt? { get }
}
/// A storable type with an invisibility flag (`isInvisible`).
public protocol IsInvisibleAssignableSecureStorable {
    /// Whether keychain browsers hide the item (`kSecAttrIsInvisible`); nil when not set.
    var isInvisible: Bool? { get }
}
/// A storable type with a negative flag (`isNegative`).
public protocol IsNegativeAssignableSecureStorable {
    /// Whether the item is a negative entry, a password the user chose not to store (`kSecAttrIsNegative`); nil when not set.
    var isNegative: Bool? { get }
}

public extension DescribableSecureStorable {
    /// None unless the adopting type declares it.
    var description: String? { nil }
}
public extension CommentableSecureStorable {
    /// None unless the adopting type declares it.
    var comment: String? { nil }
}
public extension CreatorDesignatableSecureStorable {
    /// None unless the adopting type declares it.
    var creator: UInt? { nil }
}
public extension LabellableSecureStorable {
    /// None unless the adopting type declares it.
    var label: String? { nil }
}
public extension TypeDesignatableSecureStorable {
    /// None unless the adopting type declares it.
    var type: UInt? { nil }
}
public extension IsInvisibleAssignableSecureStorable {
    /// None unless the adopting type declares it.
    var isInvisible: Bool? { nil }
}
public extension IsNegativeAssignableSecureStorable {
    /// None unless the adopting type declares it.
    var isNegative: Bool? { nil }
}

// MARK: Item kinds

/// A generic password: an account in a service, with optional metadata.
///
/// As in Locksmith, an optional property must be declared with exactly the protocol's type
/// (`var comment: String?`, `var generic: NSData?`) to be used; another type is ignored.
public protocol GenericPasswordSecureStorable: AccountBasedSecureStorable, DescribableSecureStorable, CommentableSecureStorable,
    CreatorDesignatableSecureStorable, LabellableSecureStorable, TypeDesignatableSecureStorable,
    IsInvisibleAssignableSecureStorable, IsNegativeAssignableSecureStorable
{
    /// The service the password is for (`kSecAttrService`).
    var service: String { get }
    /// Generic data stored with the password in clear metadata (`kSecAttrGeneric`); nil for none.
    var generic: NSData? { get }
}

public extension GenericPasswordSecureStorable {
    /// None unless the adopting type declares it.
    var generic: NSData? { nil }
}

/// An internet password: an account on a server, port, protocol and authentication scheme.
public protocol InternetPasswordSecureStorable: AccountBasedSecureStorable, DescribableSecureStorable, CommentableSecureStorable,
    CreatorDesignatableSecureStorable, TypeDesignatableSecureStorable, IsInvisibleAssignableSecureStorable,
    IsNegativeAssignableSecureStorable
{
    /// The server the password is for (`kSecAttrServer`).
    var server: String { get }
    /// The server's port (`kSecAttrPort`).
    var port: Int { get }
    /// The protocol (`kSecAttrProtocol`).
    var internetProtocol: LocksmithInternetProtocol { get }
    /// The authentication scheme (`kSecAttrAuthenticationType`).
    var authenticationType: LocksmithInternetAuthenticationType { get }
    /// The security domain, such as an HTTP realm (`kSecAttrSecurityDomain`); nil for none.
    var securityDomain: String? { get }
    /// The path on the server (`kSecAttrPath`); nil for none.
    var path: String? { get }
}

public extension InternetPasswordSecureStorable {
    /// None unless the adopting type declares it.
    var securityDomain: String? { nil }
    /// None unless the adopting type declares it.
    var path: String? { nil }
}

/// A marker kept from Locksmith, which never implemented it: only passwords can be stored.
public protocol CertificateSecureStorable: SecureStorable {}
/// A marker kept from Locksmith, which never implemented it: only passwords can be stored.
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
