import Foundation

/// A key and value on their way into a Valet.
public struct MigratableKeyValuePair<Key: Hashable>: Hashable {
    public init(key: Key, value: Data) {
        self.key = key
        self.value = value
    }

    /// The value is the string's UTF-8 bytes.
    public init(key: Key, value: String) {
        self.init(key: key, value: Data(value.utf8))
    }

    public let key: Key
    public let value: Data
}

extension MigratableKeyValuePair: Sendable where Key: Sendable {}
