import Foundation

/// Reads a keyed archive (NSKeyedArchiver's format) from untrusted bytes.
///
/// swift-corelibs-foundation trusts the graph it unarchives: an `NSDictionary` whose
/// `NS.objects` is not an array of references makes it read past the end of its keys; its
/// property-list reader and its bridging to Swift trap on some malformed lists (fuzzing found
/// all three). Payloads can come from a store another program writes (the Secret Service), so
/// they are read here: ``BinaryPropertyList`` parses the bytes, the graph is checked (the
/// archiver's header, every object of an allowed class with the fields that class has, every
/// reference in range, no cycle), then decoded into Swift values. Writing stays Foundation's.
enum KeyedArchiveReader {
    typealias Value = BinaryPropertyList.Value

    static let allowedClassNames: Set<String> = [
        "NSDictionary", "NSMutableDictionary", "NSArray", "NSMutableArray", "NSString", "NSMutableString",
        "NSDate", "NSData", "NSMutableData", "NSNull", "NSURL", "NSNumber",
    ]

    /// The archived dictionary, or nil when the bytes are not a well-formed keyed archive of a
    /// dictionary with string keys and values of the allowed classes.
    static func decodeDictionary(_ data: Data) -> [String: Any]? {
        guard case .dictionary(let archive)? = BinaryPropertyList.parse([UInt8](data)),
              case .string("NSKeyedArchiver")? = archive["$archiver"],
              case .array(let objects)? = archive["$objects"], !objects.isEmpty,
              case .dictionary(let top)? = archive["$top"], case .uid(let root)? = top["root"], root < objects.count
        else { return nil }
        var graph = Graph(objects: objects)
        guard objects.allSatisfy({ graph.isWellFormed($0) }), graph.isAcyclic(from: root, depth: 0) else { return nil }
        return graph.decode(root) as? [String: Any]
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

        /// The Swift value of object `index` (checked well-formed and acyclic); nil for `$null`
        /// or anything that does not decode (a dictionary key that is not a string...).
        func decode(_ index: Int) -> Any? {
            switch objects[index] {
            case .string(let text): return index == 0 && text == "$null" ? nil : text
            case .integer(let value): return Int(value)
            case .real(let value): return value
            case .bool(let value): return value
            case .data(let bytes): return Data(bytes)
            case .date(let seconds): return Date(timeIntervalSinceReferenceDate: seconds)
            case .null, .uid, .array: return nil
            case .dictionary(let object):
                switch className(of: object) {
                case "NSDictionary", "NSMutableDictionary":
                    guard let keys = references(object["NS.keys"]), let values = references(object["NS.objects"]) else { return nil }
                    var dictionary: [String: Any] = [:]
                    for (key, value) in zip(keys, values) {
                        guard let name = decode(key) as? String, dictionary[name] == nil, let element = decode(value) else { return nil }
                        dictionary[name] = element
                    }
                    return dictionary
                case "NSArray", "NSMutableArray":
                    guard let elements = references(object["NS.objects"]) else { return nil }
                    var array: [Any] = []
                    for element in elements {
                        guard let value = decode(element) else { return nil }
                        array.append(value)
                    }
                    return array
                case "NSString", "NSMutableString":
                    guard case .string(let text)? = object["NS.string"] else { return nil }
                    return text
                case "NSDate":
                    switch object["NS.time"] {
                    case .real(let seconds)?: return Date(timeIntervalSinceReferenceDate: seconds)
                    case .integer(let seconds)?: return Date(timeIntervalSinceReferenceDate: Double(seconds))
                    default: return nil
                    }
                case "NSData", "NSMutableData":
                    guard case .data(let bytes)? = object["NS.data"] else { return nil }
                    return Data(bytes)
                case "NSNull":
                    return NSNull()
                case "NSURL":
                    guard case .uid(let relative)? = object["NS.relative"], let text = decode(relative) as? String else { return nil }
                    if case .uid(let base)? = object["NS.base"], let baseText = decode(base) as? String {
                        return URL(string: text, relativeTo: URL(string: baseText))
                    }
                    return URL(string: text)
                default:
                    return nil
                }
            }
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
