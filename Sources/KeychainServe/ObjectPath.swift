/// The object paths of the specification, parsed: what a call or an argument names.
enum ObjectPath: Equatable {
    case service
    /// A collection, by its name or by an alias (`/aliases/default`).
    case collection(name: String, alias: Bool)
    case item(collection: String, alias: Bool, id: String)
    case session(String)
    case prompt(String)

    static let root = "/org/freedesktop/secrets"
    /// "No object" in the specification: no prompt needed, no alias set.
    static let none = "/"

    static func collectionPath(_ name: String) -> String { "\(root)/collection/\(name)" }
    static func itemPath(_ collection: String, _ id: String) -> String { "\(root)/collection/\(collection)/\(id)" }
    static func sessionPath(_ id: String) -> String { "\(root)/session/\(id)" }
    static func promptPath(_ id: String) -> String { "\(root)/prompt/\(id)" }

    /// The object `path` names; nil for a path outside the specification's tree.
    init?(_ path: String) {
        if path == Self.root {
            self = .service
            return
        }
        guard path.hasPrefix(Self.root + "/") else { return nil }
        let parts = path.dropFirst(Self.root.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        switch (parts.first, parts.count) {
        case ("collection", 2), ("aliases", 2):
            self = .collection(name: String(parts[1]), alias: parts[0] == "aliases")
        case ("collection", 3), ("aliases", 3):
            guard ItemID.isWellFormed(parts[2]) else { return nil }
            self = .item(collection: String(parts[1]), alias: parts[0] == "aliases", id: String(parts[2]))
        case ("session", 2):
            self = .session(String(parts[1]))
        case ("prompt", 2):
            self = .prompt(String(parts[1]))
        default:
            return nil
        }
    }
}
