import Foundation

/// Writes a payload as a keyed archive in NSKeyedArchiver's format (what Locksmith stores on
/// Apple platforms, and what ``KeyedArchiveReader`` and Apple's unarchiver read).
///
/// Not Foundation's archiver: on Linux it shares one archived object between values that
/// `NSNumber` equality calls equal, so `0`, `false` and `-0.0` in one payload all came back as
/// whichever was archived first. Here strings and class descriptions are shared, as Apple's
/// archiver shares them; every number, date and datum is its own object, so each value
/// returns with its type and bits.
struct KeyedArchiveWriter {
    private var list = BinaryPropertyListWriter()
    /// `$objects`: property-list indices of the archive's objects; entry 0 is `$null`.
    private var entries: [Int] = []
    private var strings: [String: Int] = [:]
    private var classes: [String: Int] = [:]
    private var keys: [String: Int] = [:]

    /// The archive of `payload`.
    /// - Throws: ``LocksmithError/param`` when a value is not a property-list type (String,
    ///   number, Bool, Date, Data, URL, NSNull, or arrays and dictionaries with string keys of them).
    static func archive(_ payload: [String: Any]) throws(LocksmithError) -> Data {
        var writer = KeyedArchiveWriter()
        writer.entries.append(writer.list.add(.string("$null")))
        let root = try writer.entry(for: payload)
        return Data(writer.finish(root: root))
    }

    private mutating func key(_ name: String) -> Int {
        if let known = keys[name] { return known }
        let index = list.add(.string(name))
        keys[name] = index
        return index
    }

    private mutating func entry(_ object: Int) -> Int {
        entries.append(object)
        return entries.count - 1
    }

    private mutating func reference(_ entry: Int) -> Int { list.add(.uid(entry)) }

    private mutating func classReference(_ name: String) -> Int {
        if let known = classes[name] { return reference(known) }
        let names = list.add(.array([list.add(.string(name)), list.add(.string("NSObject"))]))
        let description = list.add(.dictionary([(key("$classes"), names), (key("$classname"), list.add(.string(name)))]))
        let index = entry(description)
        classes[name] = index
        return reference(index)
    }

    /// An instance of `className` with `fields` (name, property-list object).
    private mutating func instance(_ className: String, _ fields: [(String, Int)]) -> Int {
        var members = fields.map { (key: key($0.0), value: $0.1) }
        members.append((key: key("$class"), value: classReference(className)))
        return entry(list.add(.dictionary(members)))
    }

    private mutating func entry(for value: Any) throws(LocksmithError) -> Int {
        // An NSNumber by its stored type; only NSNumber instances, never Swift numbers
        // bridged to one (a Bool would become an integer).
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return entry(list.add(Self.object(for: number)))
        }
        switch value {
        case let text as String:
            if let known = strings[text] { return known }
            let index = entry(list.add(.string(text)))
            strings[text] = index
            return index
        case let flag as Bool: return entry(list.add(.bool(flag)))
        case let number as Int: return entry(list.add(.integer(Int64(number))))
        case let number as Int8: return entry(list.add(.integer(Int64(number))))
        case let number as Int16: return entry(list.add(.integer(Int64(number))))
        case let number as Int32: return entry(list.add(.integer(Int64(number))))
        case let number as Int64: return entry(list.add(.integer(number)))
        case let number as UInt: return entry(list.add(.unsignedInteger(UInt64(number))))
        case let number as UInt8: return entry(list.add(.integer(Int64(number))))
        case let number as UInt16: return entry(list.add(.integer(Int64(number))))
        case let number as UInt32: return entry(list.add(.integer(Int64(number))))
        case let number as UInt64: return entry(list.add(.unsignedInteger(number)))
        case let number as Double: return entry(list.add(.real(number)))
        case let number as Float: return entry(list.add(.real(Double(number))))
        case let date as Date:
            return instance("NSDate", [("NS.time", list.add(.real(date.timeIntervalSinceReferenceDate)))])
        case let data as Data: return entry(list.add(.data([UInt8](data))))
        case let url as URL:
            let relative = try entry(for: url.relativeString)
            var base = 0  // `$null`: an absolute URL
            if let baseURL = url.baseURL { base = try entry(for: baseURL.absoluteString) }
            return instance("NSURL", [("NS.base", reference(base)), ("NS.relative", reference(relative))])
        case is NSNull: return instance("NSNull", [])
        case let array as [Any]:
            var elements: [Int] = []
            for element in array { elements.append(try entry(for: element)) }
            return instance("NSArray", [("NS.objects", list.add(.array(elements.map { reference($0) })))])
        case let dictionary as [String: Any]:
            var keyEntries: [Int] = [], valueEntries: [Int] = []
            for (name, element) in dictionary.sorted(by: { $0.key < $1.key }) {
                keyEntries.append(try entry(for: name))
                valueEntries.append(try entry(for: element))
            }
            return instance(
                "NSDictionary",
                [
                    ("NS.keys", list.add(.array(keyEntries.map { reference($0) }))),
                    ("NS.objects", list.add(.array(valueEntries.map { reference($0) }))),
                ])
        case let dictionary as [AnyHashable: Any]:
            var named: [String: Any] = [:]
            for (name, element) in dictionary {
                guard let text = name.base as? String else { throw .param }
                named[text] = element
            }
            return try entry(for: named)
        default:
            throw .param
        }
    }

    /// An `NSNumber` by its stored type: reals as reals, unsigned 64-bit as unsigned.
    private static func object(for number: NSNumber) -> BinaryPropertyListWriter.Object {
        switch String(cString: number.objCType) {
        case "f", "d": .real(number.doubleValue)
        case "Q", "L": .unsignedInteger(number.uint64Value)
        default: .integer(number.int64Value)
        }
    }

    private mutating func finish(root: Int) -> [UInt8] {
        let objects = list.add(.array(entries))
        let top = list.add(.dictionary([(key("root"), reference(root))]))
        let archive = list.add(
            .dictionary([
                (key("$archiver"), list.add(.string("NSKeyedArchiver"))),
                (key("$objects"), objects), (key("$top"), top),
                (key("$version"), list.add(.integer(100_000))),
            ]))
        return list.bytes(top: archive)
    }
}
