import Foundation

/// Checks a keyed archive's object graph before Foundation's unarchiver sees it.
///
/// swift-corelibs-foundation trusts the graph: an `NSDictionary` whose `NS.objects` is not an
/// array of references (fuzzing found one) makes it read past the end of its key list and
/// crash the process. Payloads come from a store another program can write (the Secret
/// Service), so the graph is checked first: the archiver's header, every object of an allowed
/// class with the fields that class reads, every reference in range, no cycle, bounded depth.
enum KeyedArchiveValidator {
    static let allowedClassNames: Set<String> = [
        "NSDictionary", "NSMutableDictionary", "NSArray", "NSMutableArray", "NSString", "NSMutableString",
        "NSDate", "NSData", "NSMutableData", "NSNull", "NSURL", "NSNumber",
    ]
    static let maximumDepth = 64

    static func isValid(_ data: Data) -> Bool {
        guard let archive = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
              archive["$archiver"] as? String == "NSKeyedArchiver",
              let objects = archive["$objects"] as? [Any], !objects.isEmpty,
              let top = archive["$top"] as? [String: Any], let rootValue = top["root"], let root = reference(rootValue), root < objects.count
        else { return false }
        var graph = Graph(objects: objects)
        return objects.indices.allSatisfy { graph.isWellFormed($0) } && graph.isAcyclic(from: root, depth: 0)
    }

    /// The object index a reference (a property-list UID) points to. Foundation exposes UIDs
    /// only as an internal class; its `value` is read by reflection, and anything else is
    /// treated as no reference.
    static func reference(_ value: Any) -> Int? {
        guard String(describing: type(of: value)) == "_NSKeyedArchiverUID" else { return nil }
        for child in Mirror(reflecting: value).children where child.label == "value" {
            if let index = child.value as? UInt32 { return Int(index) }
        }
        return nil
    }

    struct Graph {
        let objects: [Any]
        private var visiting = Set<Int>()
        private var done = Set<Int>()

        init(objects: [Any]) { self.objects = objects }

        func references(_ value: Any?) -> [Int]? {
            guard let array = value as? [Any] else { return nil }
            let indices = array.compactMap(KeyedArchiveValidator.reference)
            return indices.count == array.count && indices.allSatisfy { $0 < objects.count } ? indices : nil
        }

        func className(of object: [String: Any]) -> String? {
            guard let classValue = object["$class"], let index = KeyedArchiveValidator.reference(classValue), index < objects.count,
                  let description = objects[index] as? [String: Any], let name = description["$classname"] as? String,
                  allowedClassNames.contains(name) else { return nil }
            return name
        }

        /// Whether the object at `index` has the fields its class's decoder reads.
        func isWellFormed(_ index: Int) -> Bool {
            guard let object = objects[index] as? [String: Any] else { return true }  // inline strings, numbers, data
            if let name = object["$classname"] { return (name as? String).map(allowedClassNames.contains) ?? false }
            guard let name = className(of: object) else { return false }
            for (key, value) in object where key != "$class" {
                if let target = KeyedArchiveValidator.reference(value), target >= objects.count { return false }
            }
            switch name {
            case "NSDictionary", "NSMutableDictionary":
                guard let keys = references(object["NS.keys"]), let values = references(object["NS.objects"]), keys.count == values.count else { return false }
            case "NSArray", "NSMutableArray":
                guard references(object["NS.objects"]) != nil else { return false }
            case "NSDate":
                guard object["NS.time"] is Double || object["NS.time"] is NSNumber else { return false }
            case "NSString", "NSMutableString":
                guard object["NS.string"] is String || object["NS.bytes"] is Data else { return false }
            case "NSData", "NSMutableData":
                guard object["NS.data"] is Data || object["NS.bytes"] is Data else { return false }
            case "NSURL":
                guard let relative = object["NS.relative"], KeyedArchiveValidator.reference(relative) != nil else { return false }
            default:
                break
            }
            return true
        }

        /// Whether the containers reachable from `index` form no cycle, within the depth bound.
        mutating func isAcyclic(from index: Int, depth: Int) -> Bool {
            if done.contains(index) { return true }
            guard depth < maximumDepth, !visiting.contains(index) else { return false }
            visiting.insert(index)
            defer { visiting.remove(index); done.insert(index) }
            guard let object = objects[index] as? [String: Any], object["$classname"] == nil else { return true }
            let children = (references(object["NS.keys"]) ?? []) + (references(object["NS.objects"]) ?? [])
                + object.compactMap { $0.key == "$class" ? nil : KeyedArchiveValidator.reference($0.value) }
            return children.allSatisfy { isAcyclic(from: $0, depth: depth + 1) }
        }
    }
}
