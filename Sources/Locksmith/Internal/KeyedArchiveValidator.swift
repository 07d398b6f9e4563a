import Foundation

/// Checks a keyed archive's object graph before Foundation's unarchiver sees it.
///
/// swift-corelibs-foundation trusts the graph: an `NSDictionary` whose `NS.objects` is not an
/// array of references makes it read past the end of its key list and crash the process, and
/// its property-list reader crashes on some malformed lists (fuzzing found both). Payloads can
/// come from a store another program writes (the Secret Service), so the bytes are read by
/// ``BinaryPropertyList`` and the graph checked first: the archiver's header, every object of
/// an allowed class with the fields that class reads, every reference in range, no cycle.
enum KeyedArchiveValidator {
    typealias Value = BinaryPropertyList.Value

    static let allowedClassNames: Set<String> = [
        "NSDictionary", "NSMutableDictionary", "NSArray", "NSMutableArray", "NSString", "NSMutableString",
        "NSDate", "NSData", "NSMutableData", "NSNull", "NSURL", "NSNumber",
    ]

    static func isValid(_ data: Data) -> Bool {
        guard case .dictionary(let archive)? = BinaryPropertyList.parse([UInt8](data)),
              case .string("NSKeyedArchiver")? = archive["$archiver"],
              case .array(let objects)? = archive["$objects"], !objects.isEmpty,
              case .dictionary(let top)? = archive["$top"], case .uid(let root)? = top["root"], root < objects.count
        else { return false }
        var graph = Graph(objects: objects)
        return objects.allSatisfy { graph.isWellFormed($0) } && graph.isAcyclic(from: root, depth: 0)
    }

    struct Graph {
        let objects: [Value]
        private var visiting = Set<Int>()
        private var done = Set<Int>()

        init(objects: [Value]) { self.objects = objects }

        func references(_ value: Value?) -> [Int]? {
            guard case .array(let elements)? = value else { return nil }
            var indices: [Int] = []
            for element in elements {
                guard case .uid(let index) = element, index < objects.count else { return nil }
                indices.append(index)
            }
            return indices
        }

        func className(of object: [String: Value]) -> String? {
            guard case .uid(let index)? = object["$class"], index < objects.count,
                  case .dictionary(let description) = objects[index], case .string(let name)? = description["$classname"],
                  allowedClassNames.contains(name) else { return nil }
            return name
        }

        /// Whether an object has the fields its class's decoder reads, every reference in range.
        func isWellFormed(_ value: Value) -> Bool {
            guard case .dictionary(let object) = value else { return true }  // inline strings, numbers, data
            if let name = object["$classname"] {
                guard case .string(let text) = name else { return false }
                return allowedClassNames.contains(text)
            }
            guard let name = className(of: object) else { return false }
            for (_, field) in object { if case .uid(let target) = field, target >= objects.count { return false } }
            switch name {
            case "NSDictionary", "NSMutableDictionary":
                guard let keys = references(object["NS.keys"]), let values = references(object["NS.objects"]), keys.count == values.count else { return false }
            case "NSArray", "NSMutableArray":
                guard references(object["NS.objects"]) != nil else { return false }
            case "NSDate":
                switch object["NS.time"] { case .real?, .integer?: break; default: return false }
            case "NSString", "NSMutableString":
                switch object["NS.string"] { case .string?: break; default: return false }
            case "NSData", "NSMutableData":
                switch object["NS.data"] { case .data?: break; default: return false }
            case "NSURL":
                guard case .uid? = object["NS.relative"] else { return false }
            default:
                break
            }
            return true
        }

        /// Whether the containers reachable from `index` form no cycle, within the depth bound.
        mutating func isAcyclic(from index: Int, depth: Int) -> Bool {
            if done.contains(index) { return true }
            guard depth < BinaryPropertyList.maximumDepth, !visiting.contains(index) else { return false }
            visiting.insert(index)
            defer { visiting.remove(index); done.insert(index) }
            guard case .dictionary(let object) = objects[index], object["$classname"] == nil else { return true }
            var children = (references(object["NS.keys"]) ?? []) + (references(object["NS.objects"]) ?? [])
            for (key, field) in object where key != "$class" { if case .uid(let target) = field { children.append(target) } }
            return children.allSatisfy { isAcyclic(from: $0, depth: depth + 1) }
        }
    }
}
