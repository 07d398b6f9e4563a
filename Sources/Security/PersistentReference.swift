import Foundation
import KeychainCore

/// A persistent reference (`kSecReturnPersistentRef`, `kSecValuePersistentRef`): opaque bytes
/// that name one item by its identity (class and identity attributes), valid for as long as
/// the item keeps them. Layout: `"kcpr1"`, the class code, then (tag, UTF-8 length u16, bytes)
/// for each identity attribute set.
enum PersistentReference {
    private static let magic = Array("kcpr1".utf8)
    private static let fields: [(tag: UInt8, get: @Sendable (Attributes) -> String?, set: @Sendable (inout Attributes, String) -> Void)] = [
        (1, { $0.service }, { $0.service = $1 }), (2, { $0.account }, { $0.account = $1 }), (3, { $0.accessGroup }, { $0.accessGroup = $1 }),
        (4, { $0.synchronizable.map { $0 ? "1" : "0" } }, { $0.synchronizable = $1 == "1" }), (5, { $0.server }, { $0.server = $1 }),
        (6, { $0.protocol?.rawValue }, { $0.protocol = InternetProtocol(rawValue: $1) }),
        (7, { $0.authenticationType?.rawValue }, { $0.authenticationType = AuthenticationType(rawValue: $1) }),
        (8, { $0.port.map(String.init) }, { $0.port = Int($1) }), (9, { $0.path }, { $0.path = $1 }), (10, { $0.securityDomain }, { $0.securityDomain = $1 }),
    ]

    static func make(_ item: Item) -> Data {
        var bytes = magic
        bytes.append(item.itemClass == .genericPassword ? 1 : 2)
        var identity = item.attributes
        identity.synchronizable = identity.synchronizable ?? false
        for field in fields {
            guard let value = field.get(identity) else { continue }
            let utf8 = Array(value.utf8.prefix(65_535))
            bytes.append(field.tag)
            bytes += [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)]
            bytes += utf8
        }
        return Data(bytes)
    }

    /// The class and identity attributes a reference names; nil for bytes that are not one.
    static func read(_ data: Data) -> (ItemClass, Attributes)? {
        let bytes = [UInt8](data)
        guard bytes.count > magic.count, Array(bytes[0..<magic.count]) == magic else { return nil }
        let itemClass: ItemClass
        switch bytes[magic.count] {
        case 1: itemClass = .genericPassword
        case 2: itemClass = .internetPassword
        default: return nil
        }
        var attributes = Attributes()
        var index = magic.count + 1
        while index < bytes.count {
            guard index + 3 <= bytes.count, let field = fields.first(where: { $0.tag == bytes[index] }) else { return nil }
            let length = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard index + 3 + length <= bytes.count, let value = String(validating: bytes[(index + 3)..<(index + 3 + length)], as: UTF8.self) else { return nil }
            field.set(&attributes, value)
            index += 3 + length
        }
        return (itemClass, attributes)
    }
}
