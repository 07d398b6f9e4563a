/// A keychain item: its class, its attributes and (when asked for) its secret value.
public struct Item: Sendable {
    public var itemClass: ItemClass
    public var attributes: Attributes
    /// The secret, in wipeable memory. Nil when a query did not ask for data.
    public var value: SecretBytes?

    public init(_ itemClass: ItemClass, attributes: Attributes, value: SecretBytes? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.value = value
    }
}
