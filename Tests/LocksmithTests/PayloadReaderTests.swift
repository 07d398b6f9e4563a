import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

@_spi(Fuzzing) @testable import Locksmith

/// Locksmith's payload reader returns every property-list value Foundation's writer stores,
/// exactly, and bounds its work on hostile archives.
@Suite("Locksmith payloads: lossless round trips, bounded reading")
struct PayloadReaderTests {
    /// Every property-list type, with the edge values that were lost (negative and 64-bit
    /// integers, negative reals, dates before 2001).
    static var edgeValues: [(String, Any)] {
        [
            ("minus one", -1), ("zero", 0), ("Int64.min", Int64.min), ("Int64.max", Int64.max), ("UInt64.max", UInt64.max),
            ("2^63", UInt64(1) << 63), ("Int32.min", Int(Int32.min)), ("UInt32.max", Int(UInt32.max)),
            ("minus 2.5", -2.5), ("minus zero", -0.0), ("pi", Double.pi), ("infinity", Double.infinity),
            ("negative infinity", -Double.infinity), ("tiny", Double.leastNonzeroMagnitude), ("huge", Double.greatestFiniteMagnitude),
            ("epoch", Date(timeIntervalSince1970: 0)), ("1900", Date(timeIntervalSince1970: -2_208_988_800)),
            ("distant past", Date.distantPast), ("distant future", Date.distantFuture), ("2001", Date(timeIntervalSinceReferenceDate: 0)),
            ("true", true), ("false", false), ("empty string", ""), ("ascii", "hello"), ("unicode", "gr\u{fc}\u{df}e \u{1F511} \u{65E5}\u{672C}"),
            ("empty data", Data()), ("data", Data([0, 1, 254, 255])), ("null", NSNull()),
            ("array", [1, -2, 3] as [Any]), ("nested", ["a": [-1.5, "x"] as [Any], "b": ["c": Int64.min]] as [String: Any]),
            ("url", URL(string: "https://example.com/a?b=c")!),
        ]
    }

    /// Whether `read` is the value `written` was, bit for bit where it matters (the sign of
    /// zero, the exact integer).
    static func same(_ written: Any, _ read: Any?) -> Bool {
        guard let read else { return false }
        switch written {
        case let value as UInt64:
            if let r = read as? UInt64 { return r == value }
            return (read as? Int).map { $0 >= 0 && UInt64($0) == value } ?? false
        case let value as Int64: return (read as? Int).map { Int64($0) == value } ?? false
        case let value as Int: return (read as? Int) == value
        case let value as Double:
            guard let r = read as? Double else { return false }
            return r.bitPattern == value.bitPattern
        case let value as Bool: return (read as? Bool) == value
        case let value as Date: return (read as? Date) == value
        case let value as String: return (read as? String) == value
        case let value as Data: return (read as? Data) == value
        case is NSNull: return read is NSNull
        case let value as URL: return (read as? URL)?.absoluteString == value.absoluteString
        case let values as [Any]:
            guard let r = read as? [Any], r.count == values.count else { return false }
            return zip(values, r).allSatisfy { same($0, $1) }
        case let values as [String: Any]:
            guard let r = read as? [String: Any], r.count == values.count else { return false }
            return values.allSatisfy { same($0.value, r[$0.key]) }
        default: return false
        }
    }

    @Test("every edge value reads back exactly, alone and all in one payload (where Foundation's archiver merged 0, false and -0.0)")
    func everyEdgeValueRoundTrips() throws {
        for (name, value) in Self.edgeValues {
            let bytes = try PayloadArchive.encode(["v": value])
            let read = KeyedArchiveReader.decodeDictionary(bytes)
            #expect(read != nil && Self.same(value, read?["v"]), "\(name): wrote \(value), read \(String(describing: read?["v"]))")
        }
        let all = Dictionary(uniqueKeysWithValues: Self.edgeValues)
        let read = try #require(KeyedArchiveReader.decodeDictionary(try PayloadArchive.encode(all)))
        #expect(Self.same(all, read), "all edge values in one payload")
    }

    @Test("Foundation's unarchiver (Apple's format) reads what we write")
    func foundationReadsWhatWeWrite() throws {
        let payload: [String: Any] = [
            "name": "Skroob", "n": -1, "pi": Double.pi, "on": true, "bytes": Data([1, 2]),
            "list": ["a", 2] as [Any], "when": Date(timeIntervalSince1970: 0),
        ]
        let object = try NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(try PayloadArchive.encode(payload))
        let read = try #require(object as? [String: Any])
        #expect(read["name"] as? String == "Skroob" && read["n"] as? Int == -1 && read["pi"] as? Double == Double.pi)
        #expect(read["on"] as? Bool == true && read["bytes"] as? Data == Data([1, 2]) && (read["list"] as? [Any])?.count == 2)
        #expect(read["when"] as? Date == Date(timeIntervalSince1970: 0))
    }

    @Test("edge values survive Locksmith's save and load on the vault")
    func edgeValuesOnVault() throws { try edgeValuesThroughLocksmith(try TestStore(.vault)) }

    @Test(
        "edge values survive Locksmith's save and load on the Secret Service",
        .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
    func edgeValuesOnSecretService() throws { try edgeValuesThroughLocksmith(try TestStore(.secretService)) }

    func edgeValuesThroughLocksmith(_ testStore: TestStore) throws {
        let kind = testStore.kind
        try DefaultStore.withStore(testStore.store) {
            let payload = Dictionary(uniqueKeysWithValues: Self.edgeValues)
            try Locksmith.saveData(data: payload, forUserAccount: "edges", inService: "payloads")
            let read = try #require(Locksmith.loadDataForUserAccount(userAccount: "edges", inService: "payloads"))
            for (name, value) in Self.edgeValues {
                #expect(Self.same(value, read[name]), "\(name) on \(kind)")
            }
        }
    }

    /// An archive of nested arrays, each holding the next one twice: `levels` objects that
    /// unfold into 2^levels values (the shape that took seconds and gigabytes).
    static func doublingArchive(levels: Int) -> [UInt8] {
        PropertyListWriter.keyedArchive { archive in
            var inner = archive.string("leaf")
            for _ in 0..<levels { inner = archive.array([inner, inner]) }
            return archive.dictionary(keys: [archive.string("k")], values: [inner])
        }
    }

    @Test("shared subtrees that unfold exponentially are refused at once, in work proportional to the input")
    func exponentialSharingIsBounded() {
        for levels in [20, 40, 62] {
            let bytes = Self.doublingArchive(levels: levels)
            var work = 0
            #expect(KeyedArchiveReader.decodeDictionary(Data(bytes), work: &work) == nil, "\(levels) levels")
            #expect(work <= LocksmithFuzzEntryPoints.workPerByte * bytes.count + 1024, "\(work) steps for \(bytes.count) bytes")
        }
        // Sharing within the node bound is fine, and decodes to shared values.
        let small = Self.doublingArchive(levels: 10)
        let read = KeyedArchiveReader.decodeDictionary(Data(small))
        #expect(read?["k"] is [Any])
    }

    @Test("the depth bound holds on the longest path, even where a shorter path reached an object first")
    func depthIsBoundedOnTheLongestPath() {
        // A chain of `length` arrays, reached both from the root directly (short path, visited
        // first) and through the whole chain (long path).
        func chain(_ length: Int) -> [UInt8] {
            PropertyListWriter.keyedArchive { archive in
                var nodes = [archive.string("leaf")]
                for _ in 0..<length { nodes.append(archive.array([nodes.last!])) }
                return archive.dictionary(keys: [archive.string("short"), archive.string("long")], values: [nodes[length / 2], nodes[length]])
            }
        }
        #expect(KeyedArchiveReader.decodeDictionary(Data(chain(40))) != nil)
        #expect(KeyedArchiveReader.decodeDictionary(Data(chain(KeyedArchiveReader.maximumDepth + 1))) == nil)
        #expect(KeyedArchiveReader.decodeDictionary(Data(chain(12_000))) == nil, "the 12,000-level archive that overflowed the stack")
    }

    @Test("cycles, self references and references out of range are refused")
    func malformedGraphsAreRefused() {
        let cycle = PropertyListWriter.keyedArchive { archive in
            let a = archive.reserve(), b = archive.reserve()
            archive.setArray(a, [b])
            archive.setArray(b, [a])
            return archive.dictionary(keys: [archive.string("k")], values: [a])
        }
        let selfReference = PropertyListWriter.keyedArchive { archive in
            let a = archive.reserve()
            archive.setArray(a, [a])
            return archive.dictionary(keys: [archive.string("k")], values: [a])
        }
        let outOfRange = PropertyListWriter.keyedArchive { archive in
            archive.dictionary(keys: [archive.string("k")], values: [10_000])
        }
        for (name, bytes) in [("cycle", cycle), ("self reference", selfReference), ("out of range", outOfRange)] {
            #expect(KeyedArchiveReader.decodeDictionary(Data(bytes)) == nil, "\(name)")
        }
    }

    @Test("a plain property list of overlapping, shared containers costs work proportional to its size")
    func overlappingContainersAreBounded() {
        // 200 arrays, each listing the next one 60 times: every container shares the same bytes'
        // worth of references, 60^200 values if unfolded.
        var writer = PropertyListWriter()
        var next = writer.add(.string("x"))
        for _ in 0..<200 { next = writer.add(.array(Array(repeating: next, count: 60))) }
        let bytes = writer.bytes(top: next)
        var work = 0
        #expect(KeyedArchiveReader.decodeDictionary(Data(bytes), work: &work) == nil)
        #expect(work <= LocksmithFuzzEntryPoints.workPerByte * bytes.count + 1024, "\(work) steps for \(bytes.count) bytes")
    }
}
