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
///
/// The work is bounded whatever the graph: each object is checked and decoded once (shared
/// objects are shared in the result, as Foundation's unarchiver shares them), the longest path
/// from the root may not pass ``maximumDepth`` and the tree the result unfolds into (what a
/// caller walking it visits) may not pass ``maximumNodes``.
enum KeyedArchiveReader {
    typealias Object = BinaryPropertyList.Object

    /// The deepest nesting accepted, on the longest path from the root.
    static let maximumDepth = 64
    /// The most values the decoded dictionary may unfold into, counting shared ones each time.
    static let maximumNodes = 1 << 16

    static let allowedClassNames: Set<String> = [
        "NSDictionary", "NSMutableDictionary", "NSArray", "NSMutableArray", "NSString", "NSMutableString",
        "NSDate", "NSData", "NSMutableData", "NSNull", "NSURL", "NSNumber",
    ]

    /// The archived dictionary, or nil when the bytes are not a well-formed keyed archive of a
    /// dictionary with string keys and values of the allowed classes, within the bounds.
    static func decodeDictionary(_ data: Data) -> [String: Any]? {
        var work = 0
        return decodeDictionary(data, work: &work)
    }

    /// As ``decodeDictionary(_:)``, adding to `work` what it did (bytes and references read,
    /// objects visited): the fuzz target checks it stays proportional to the input.
    static func decodeDictionary(_ data: Data, work: inout Int) -> [String: Any]? {
        guard let document = BinaryPropertyList.Document([UInt8](data)) else { return nil }
        var graph = Graph(document)
        defer { work += graph.work }
        guard let root = graph.root, graph.measure(root, pathDepth: 0) != nil else { return nil }
        return graph.decode(root) as? [String: Any]
    }

    /// One object of the archive, checked: what it decodes to, and which objects it holds.
    enum Node {
        case null
        case value(Any)
        case dictionary(keys: [Int], values: [Int])
        case array([Int])
        case url(relative: Int, base: Int?)
    }

    struct Graph {
        /// The archive's objects (`$objects`), as indices of the property list's objects.
        private var objects: [Int]
        private var document: BinaryPropertyList.Document
        private(set) var root: Int?
        private var nodes: [Int: Node] = [:]
        /// Height and unfolded size of each object whose subgraph is measured.
        private var measured: [Int: (height: Int, size: Int)] = [:]
        private var visiting = Set<Int>()
        private var decoded: [Int: Any] = [:]
        private var visits = 0
        /// The work done so far: objects visited here, and the property list's own.
        var work: Int { visits + document.work }

        /// Reads the archive's header; ``root`` is nil unless it is NSKeyedArchiver's with a root.
        init(_ document: BinaryPropertyList.Document) {
            var document = document
            self.document = document
            objects = []
            root = nil
            guard let archive = Self.fields(of: document.top, in: &document),
                let archiver = archive["$archiver"], case .string("NSKeyedArchiver")? = document.object(archiver),
                let list = archive["$objects"], case .array(let objects)? = document.object(list), !objects.isEmpty,
                let topIndex = archive["$top"], let top = Self.fields(of: topIndex, in: &document),
                let rootIndex = top["root"], case .uid(let root)? = document.object(rootIndex), root < objects.count
            else { self.document = document; return }
            self.objects = objects
            self.document = document
            self.root = root
        }

        /// A property-list dictionary's entries by key; nil unless every key is a distinct string.
        private static func fields(of index: Int, in document: inout BinaryPropertyList.Document) -> [String: Int]? {
            guard case .dictionary(let keys, let values)? = document.object(index) else { return nil }
            var result: [String: Int] = [:]
            for (key, value) in zip(keys, values) {
                guard case .string(let name)? = document.object(key), result[name] == nil else { return nil }
                result[name] = value
            }
            return result
        }

        /// The archive object a field refers to (`CF$UID`), nil when it is not a reference in range.
        private mutating func reference(_ field: Int?) -> Int? {
            guard let field, case .uid(let target)? = document.object(field), target < objects.count else { return nil }
            return target
        }

        /// The archive objects an `NS.keys` / `NS.objects` field lists.
        private mutating func references(_ field: Int?) -> [Int]? {
            guard let field, case .array(let elements)? = document.object(field) else { return nil }
            var result: [Int] = []
            result.reserveCapacity(elements.count)
            for element in elements {
                guard let target = reference(element) else { return nil }
                result.append(target)
            }
            return result
        }

        /// Archive object `index`, checked once: an inline value, or an instance of an allowed
        /// class with the fields its decoder reads. Nil when malformed.
        mutating func node(_ index: Int) -> Node? {
            visits += 1
            if let known = nodes[index] { return known }
            guard let object = document.object(objects[index]) else { return nil }
            let node: Node
            switch object {
            case .string(let text): node = index == 0 && text == "$null" ? .null : .value(text)
            case .integer(let value): node = .value(Int(value))
            case .unsignedInteger(let value): node = .value(value)
            case .real(let value): node = .value(value)
            case .bool(let value): node = .value(value)
            case .data(let bytes): node = .value(Data(bytes))
            case .date(let seconds): node = .value(Date(timeIntervalSinceReferenceDate: seconds))
            case .null, .uid, .array: return nil
            case .dictionary:
                guard let instance = instance(objects[index]) else { return nil }
                node = instance
            }
            nodes[index] = node
            return node
        }

        private mutating func instance(_ listIndex: Int) -> Node? {
            guard let fields = Self.fields(of: listIndex, in: &document), let classReference = reference(fields["$class"]),
                let description = Self.fields(of: objects[classReference], in: &document),
                let nameIndex = description["$classname"], case .string(let name)? = document.object(nameIndex),
                allowedClassNames.contains(name)
            else { return nil }
            switch name {
            case "NSDictionary", "NSMutableDictionary":
                guard let keys = references(fields["NS.keys"]), let values = references(fields["NS.objects"]), keys.count == values.count else { return nil }
                return .dictionary(keys: keys, values: values)
            case "NSArray", "NSMutableArray":
                return references(fields["NS.objects"]).map { .array($0) }
            case "NSDate":
                switch fields["NS.time"].flatMap({ document.object($0) }) {
                case .real(let seconds)?: return .value(Date(timeIntervalSinceReferenceDate: seconds))
                case .integer(let seconds)?: return .value(Date(timeIntervalSinceReferenceDate: Double(seconds)))
                default: return nil
                }
            case "NSString", "NSMutableString":
                guard case .string(let text)? = fields["NS.string"].flatMap({ document.object($0) }) else { return nil }
                return .value(text)
            case "NSData", "NSMutableData":
                guard case .data(let bytes)? = fields["NS.data"].flatMap({ document.object($0) }) else { return nil }
                return .value(Data(bytes))
            case "NSNull":
                return .value(NSNull())
            case "NSURL":
                guard let relative = reference(fields["NS.relative"]) else { return nil }
                if fields["NS.base"] == nil { return .url(relative: relative, base: nil) }
                guard let base = reference(fields["NS.base"]) else { return nil }
                return .url(relative: relative, base: base)
            default:
                return nil  // NSNumber instances: Foundation archives numbers inline
            }
        }

        private static func children(_ node: Node) -> [Int] {
            switch node {
            case .null, .value: []
            case .dictionary(let keys, let values): keys + values
            case .array(let elements): elements
            case .url(let relative, let base): [relative] + (base.map { [$0] } ?? [])
            }
        }

        /// The height and unfolded size of `index`'s subgraph, each object measured once; nil
        /// for a malformed object, a cycle, a path deeper than ``maximumDepth`` or a tree larger
        /// than ``maximumNodes``.
        mutating func measure(_ index: Int, pathDepth: Int) -> (height: Int, size: Int)? {
            if let known = measured[index] { return pathDepth + known.height <= maximumDepth ? known : nil }
            guard pathDepth <= maximumDepth, !visiting.contains(index), let node = node(index) else { return nil }
            visiting.insert(index)
            defer { visiting.remove(index) }
            var height = 0, size = 1
            for child in Self.children(node) {
                guard let sub = measure(child, pathDepth: pathDepth + 1) else { return nil }
                height = max(height, sub.height + 1)
                size += sub.size
                guard size <= maximumNodes else { return nil }
            }
            measured[index] = (height, size)
            return (height, size)
        }

        /// The Swift value of a measured object, each object decoded once; nil for `$null`
        /// or anything that does not decode (a dictionary key that is not a string...).
        mutating func decode(_ index: Int) -> Any? {
            if let known = decoded[index] { return known }
            guard let current = node(index) else { return nil }
            let value: Any?
            switch current {
            case .null:
                value = nil
            case .value(let inline):
                value = inline
            case .dictionary(let keys, let values):
                var dictionary: [String: Any] = [:]
                dictionary.reserveCapacity(keys.count)
                for (key, element) in zip(keys, values) {
                    guard let name = decode(key) as? String, dictionary[name] == nil, let member = decode(element) else { return nil }
                    dictionary[name] = member
                }
                value = dictionary
            case .array(let elements):
                var array: [Any] = []
                array.reserveCapacity(elements.count)
                for element in elements {
                    guard let member = decode(element) else { return nil }
                    array.append(member)
                }
                value = array
            case .url(let relative, let base):
                guard let text = decode(relative) as? String else { return nil }
                // No base, or `$null` (how Foundation archives an absolute URL).
                if let base, case .value = node(base) {
                    guard let baseText = decode(base) as? String else { return nil }
                    value = URL(string: text, relativeTo: URL(string: baseText))
                } else {
                    value = URL(string: text)
                }
            }
            if let value { decoded[index] = value }
            return value
        }
    }
}
