/// A non-empty string that names a Valet's sandbox.
public struct Identifier: CustomStringConvertible, Sendable {
    private let backingString: String

    /// Nil when `string` is nil or empty.
    public init?(nonEmpty string: String?) {
        guard let string, !string.isEmpty else { return nil }
        backingString = string
    }

    /// The identifier's string.
    public var description: String { backingString }
}
