import KeychainCore

/// What a Secret Service item is, its secret aside: what `Label`, `Attributes`, `Created` and
/// `Modified` show, and the content type its secret was stored with.
struct SecretItemRecord: Equatable {
    var label: String
    var attributes: [String: String]
    var contentType: String
    /// Seconds since the epoch.
    var created: UInt64 = 0
    var modified: UInt64 = 0
    /// The dates another provider showed for an item `migrate --foreign` brought in, kept
    /// with it (``ItemRecordCoding``); nil for an item stored here.
    var kept: ItemRecordCoding.KeptDates? = nil
}

/// The storage behind one collection of the daemon: the vault's (``VaultCollection``, the
/// persistent `login` collection) or memory's (``MemoryCollection``, the `session` one).
/// The D-Bus handlers speak only this protocol, so a collection kept elsewhere (its own vault
/// file, a synchronizable scope) is one more conformance.
///
/// Items are named by an id unique in their collection, made of `[0-9a-f]`, which is the last
/// element of their object path.
protocol SecretCollection: AnyObject {
    /// The collection's name: the last element of its object path (`login`, `session`).
    var name: String { get }
    /// The collection's `Label`.
    func label() throws(ServiceError) -> String
    func setLabel(_ label: String) throws(ServiceError)
    /// When the collection was created and last changed, in seconds since the epoch.
    func dates() throws(ServiceError) -> (created: UInt64, modified: UInt64)
    /// Whether secrets are out of reach now (a locked vault): items still list, with their
    /// attributes when those are readable, but no secret is served and nothing changes.
    var isLocked: Bool { get }
    /// Every item's id.
    func itemIDs() throws(ServiceError) -> [String]
    /// The ids of the items that have every pair of `attributes` (all items for an empty map):
    /// found through an index, never by reading every item.
    func search(_ attributes: [String: String]) throws(ServiceError) -> [String]
    /// The item's record; `NoSuchObject` when there is none.
    func record(_ id: String) throws(ServiceError) -> SecretItemRecord
    /// The item's secret; `IsLocked` when the collection is locked, `NoSuchObject` when there is none.
    func secret(_ id: String) throws(ServiceError) -> SecretBytes
    /// Stores a new item, or with `replace` gives the item with exactly these attributes the
    /// new label and secret. Returns its id, and whether it replaced one.
    func create(_ record: SecretItemRecord, secret: SecretBytes, replace: Bool) throws(ServiceError) -> (id: String, replaced: Bool)
    /// Changes what is given of the item, in one write.
    func update(_ id: String, label: String?, attributes: [String: String]?, secret: SecretBytes?, contentType: String?) throws(ServiceError)
    /// Deletes the item; `NoSuchObject` when there is none.
    func delete(_ id: String) throws(ServiceError)
    /// Whether the collection is kept in the vault: it locks with the vault (`Service.Lock`
    /// names it), and `Collection.Delete` may remove it. What the daemon holds in its own
    /// memory is neither.
    var isKeptInVault: Bool { get }
    /// Deletes the collection with every item in it, in one write; `AccessDenied` for one that
    /// cannot be deleted.
    func deleteCollection() throws(ServiceError)
}

enum ItemID {
    /// A new random id: 64 bits in hex, an object path element of its own.
    static func make() -> String {
        SecretBytes.random(count: 8).withUnsafeBytes { bytes in
            bytes.map { byte in
                let digits = Array("0123456789abcdef".utf8)
                return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
            }.joined()
        }
    }

    /// Whether `text` can be an id this daemon made (what a path names is checked before any lookup).
    static func isWellFormed(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
