/// A keychain item: its class, its attributes and (when asked for) its secret value.
public struct Item: Sendable {
    /// A generic or an internet password.
    public var itemClass: ItemClass
    /// What names and describes the item (never secret).
    public var attributes: Attributes
    /// The secret, in wipeable memory. Nil when a query did not ask for data.
    public var value: SecretBytes?

    /// An item of `itemClass` with `attributes` and, to write or as read, its `value`.
    public init(_ itemClass: ItemClass, attributes: Attributes, value: SecretBytes? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.value = value
    }
}
