import FoundationEssentials
import KeychainServe

/// A Secret Service item kept by `keychain serve`, for listings: `secret-service`, where it is
/// (`COLLECTION/ID`, the end of its object path), the class of its secret, its label and its
/// attributes in name order, escaped as ``ItemDescription`` escapes every field.
enum ServedItemDescription {
    static func line(_ row: ServedItemRow) -> String {
        let parts =
            ["secret-service", "\(row.collection)/\(row.id)", "whenUnlocked", "label=\(row.label)"]
            + row.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return parts.map(ItemDescription.escaped).joined(separator: "\t")
    }

    static func json(_ row: ServedItemRow) -> JSON {
        var object: [String: JSON] = [
            "class": .string("secret-service"), "collection": .string(row.collection), "item": .string(row.id), "label": .string(row.label),
            "accessibility": .string("whenUnlocked"), "attributes": .object(row.attributes.mapValues { .string($0) }),
        ]
        if let created = row.created { object["created"] = .string(created.formatted(.iso8601)) }
        if let modified = row.modified { object["modified"] = .string(modified.formatted(.iso8601)) }
        return .object(object)
    }
}
