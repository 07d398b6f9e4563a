import Foundation
import KeychainCore

/// A persistent reference (`kSecReturnPersistentRef`, `kSecValuePersistentRef`): opaque bytes
/// that name one item by its identity, valid for as long as the item keeps it. Layout:
/// `"kcpr2"`, the class code, then the item's identity record (KeychainCore's encoding).
enum PersistentReference {
    private static let magic = Array("kcpr2".utf8)

    static func make(_ item: Item) -> Data {
        Data(magic + [item.itemClass == .genericPassword ? 1 : 2] + item.identityRecord)
    }

    /// The class and identity attributes a reference names; nil for bytes that are not one.
    static func read(_ data: Data) -> (ItemClass, Attributes)? {
        let bytes = [UInt8](data)
        guard bytes.count > magic.count, bytes.starts(with: magic) else { return nil }
        let itemClass: ItemClass
        switch bytes[magic.count] {
        case 1: itemClass = .genericPassword
        case 2: itemClass = .internetPassword
        default: return nil
        }
        guard let identity = Attributes(identityRecord: Array(bytes[(magic.count + 1)...]), of: itemClass) else { return nil }
        return (itemClass, identity)
    }
}
