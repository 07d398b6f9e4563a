import Foundation

@testable import Locksmith

/// Builds keyed archives object by object on Locksmith's property-list writer, so that tests
/// can make the hostile shapes an archiver never writes: shared subtrees, deep chains, cycles.
struct PropertyListWriter {
    typealias Object = BinaryPropertyListWriter.Object
    private var list = BinaryPropertyListWriter()

    mutating func add(_ object: Object) -> Int { list.add(object) }

    func bytes(top: Int) -> [UInt8] { list.bytes(top: top) }

    /// A keyed archive as NSKeyedArchiver lays it out. `body` adds the archive's objects
    /// (`$objects` entries, as property-list object indices) through the archive builder and
    /// returns the root's archive index.
    static func keyedArchive(_ body: (inout ArchiveBuilder) -> Int) -> [UInt8] {
        var builder = ArchiveBuilder()
        let root = body(&builder)
        return builder.finish(root: root)
    }

    struct ArchiveBuilder {
        var writer = PropertyListWriter()
        /// `$objects`, as property-list object indices; entry 0 is `$null`.
        var entries: [Int] = []
        private var classes: [String: Int] = [:]

        init() { entries.append(writer.add(.string("$null"))) }

        private mutating func entry(_ object: Int) -> Int {
            entries.append(object)
            return entries.count - 1
        }

        private mutating func key(_ name: String) -> Int { writer.add(.string(name)) }

        private mutating func classEntry(_ name: String) -> Int {
            if let known = classes[name] { return known }
            let description = writer.add(
                .dictionary([
                    (key("$classname"), writer.add(.string(name))),
                    (key("$classes"), writer.add(.array([writer.add(.string(name))]))),
                ]))
            let index = entry(description)
            classes[name] = index
            return index
        }

        /// An inline string entry.
        mutating func string(_ text: String) -> Int { entry(writer.add(.string(text))) }

        /// A placeholder entry, filled by ``setArray(_:_:)`` or ``setDictionary(_:keys:values:)``
        /// (so that entries may refer to later ones, or to themselves).
        mutating func reserve() -> Int { entry(-1) }

        mutating func array(_ elements: [Int]) -> Int {
            let index = reserve()
            setArray(index, elements)
            return index
        }

        mutating func dictionary(keys: [Int], values: [Int]) -> Int {
            let index = reserve()
            setDictionary(index, keys: keys, values: values)
            return index
        }

        mutating func setArray(_ index: Int, _ elements: [Int]) {
            let uids = elements.map { writer.add(.uid($0)) }
            entries[index] = writer.add(
                .dictionary([
                    (key("$class"), writer.add(.uid(classEntry("NSArray")))),
                    (key("NS.objects"), writer.add(.array(uids))),
                ]))
        }

        mutating func setDictionary(_ index: Int, keys: [Int], values: [Int]) {
            let keyUIDs = keys.map { writer.add(.uid($0)) }, valueUIDs = values.map { writer.add(.uid($0)) }
            entries[index] = writer.add(
                .dictionary([
                    (key("$class"), writer.add(.uid(classEntry("NSDictionary")))),
                    (key("NS.keys"), writer.add(.array(keyUIDs))),
                    (key("NS.objects"), writer.add(.array(valueUIDs))),
                ]))
        }

        mutating func finish(root: Int) -> [UInt8] {
            let objects = writer.add(.array(entries))
            let top = writer.add(.dictionary([(key("root"), writer.add(.uid(root)))]))
            let archive = writer.add(
                .dictionary([
                    (key("$archiver"), writer.add(.string("NSKeyedArchiver"))),
                    (key("$objects"), objects), (key("$top"), top),
                    (key("$version"), writer.add(.integer(100_000))),
                ]))
            return writer.bytes(top: archive)
        }
    }
}
