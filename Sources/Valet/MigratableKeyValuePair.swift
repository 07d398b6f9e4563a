import Foundation

/// A key and value on their way into a Valet.
public struct MigratableKeyValuePair<Key: Hashable>: Hashable {
    /// A pair of `key` and `value`.
    public init(key: Key, value: Data) {
        self.key = key
        self.value = value
    }

    /// The value is the string's UTF-8 bytes.
    public init(key: Key, value: String) {
        self.init(key: key, value: Data(value.utf8))
    }

    /// The key the value is stored under.
    public let key: Key
    /// The value.
    public let value: Data
}

extension MigratableKeyValuePair: Sendable where Key: Sendable {}
