/// The access group shared by several programs of one user: `prefix.group`.
///
/// On Linux every program of a user can name any group: a group keeps the data of
/// cooperating programs together and apart from other groups, but it does not stop another
/// program of the same user that names it (as on an unsandboxed Mac).
public struct SharedGroupIdentifier: CustomStringConvertible, Sendable {
    package let prefix: String
    package let groupIdentifier: String

    /// A group named by an App ID prefix, as `AppID12345.Druidia`. Nil if either part is empty.
    public init?(appIDPrefix: String, nonEmptyGroup groupIdentifier: String?) {
        guard !appIDPrefix.isEmpty, let groupIdentifier, !groupIdentifier.isEmpty else { return nil }
        prefix = appIDPrefix
        self.groupIdentifier = groupIdentifier
    }

    /// An app group, as `group.Druidia`. Nil unless `groupPrefix` is `"group"` (as on iOS) and
    /// the group is non-empty.
    public init?(groupPrefix: String, nonEmptyGroup groupIdentifier: String?) {
        guard groupPrefix == "group", let groupIdentifier, !groupIdentifier.isEmpty else { return nil }
        prefix = groupPrefix
        self.groupIdentifier = groupIdentifier
    }

    /// `prefix.group`: the access group attribute of the group's items.
    public var description: String { prefix + "." + groupIdentifier }

    package var asIdentifier: Identifier { Identifier(nonEmpty: description)! }
}
