import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore
@testable import KeychainSystem

/// Each shortcut of the read and write paths gives exactly the answers of the plain definition
/// it stands for, checked side by side over every case that matters.
@Suite("Each shortcut answers as its plain definition does")
struct ShortcutEquivalenceTests {
    /// The plain definition: the last non-zero byte must be the 0x80 marker.
    func plainContentCount(_ bytes: [UInt8]) -> Int? {
        guard let last = bytes.lastIndex(where: { $0 != 0 }), bytes[last] == 0x80 else { return nil }
        return last
    }

    @Test("padding: the content length, skipping zeros a word at a time, for every length and marker position up to 40 bytes")
    func paddingContentCount() {
        for length in 0...40 {
            for marker in -1..<length {
                for markerByte: UInt8 in [0x80, 0x01, 0xFF] {
                    var bytes = [UInt8](repeating: 0, count: length)
                    if marker >= 0 { bytes[marker] = markerByte }
                    if marker > 0 { bytes[marker - 1] = 0x41 }
                    let fast = bytes.withUnsafeBytes { SizePadding.contentCount($0) }
                    #expect(fast == plainContentCount(bytes), "length \(length), marker \(marker), byte \(markerByte)")
                }
            }
        }
    }

    @Test("text: ASCII, other UTF-8 and invalid bytes at every offset decode as String(validating:) does")
    func textDecoding() {
        let samples: [[UInt8]] = [
            [], Array("account".utf8), Array("a-much-longer-service-name.example.com".utf8), Array("café".utf8),
            Array("e\u{301}tude".utf8), [0x61, 0x80], [0xC3], [0xFF, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68],
            Array(repeating: 0x61, count: 15) + [0xE2, 0x82],
        ]
        for sample in samples {
            let fast = sample.withUnsafeBytes { AttributeField.text($0) }
            let plain = sample.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
            #expect(fast == plain && fast?.utf8.elementsEqual(sample) != false, "\(sample)")
        }
    }

    @Test("scope: read off the record, the same scope byte for byte, absent as empty; canonically equal but different bytes are another scope")
    func scopeCheck() {
        let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed, "Swift calls them equal")
        let a = Attributes(service: precomposed, accessGroup: nil, synchronizable: nil)
        func holds(_ itemClass: ItemClass, _ stored: Attributes, _ wanted: Attributes) -> Bool {
            RecordCoding.encode(stored).withUnsafeBytes { ScopeCheck(itemClass, wanted).holds(in: $0) }
        }
        #expect(holds(.genericPassword, a, Attributes(service: precomposed, accessGroup: "", synchronizable: false)))
        #expect(!holds(.genericPassword, a, Attributes(service: decomposed)))
        #expect(!holds(.genericPassword, a, Attributes(service: precomposed, synchronizable: true)))
        #expect(!holds(.genericPassword, a, Attributes(service: precomposed, accessGroup: "group")))
        #expect(holds(.internetPassword, Attributes(server: "example.com"), Attributes(service: "ignored", server: "example.com")))
        // The same answer as comparing the encodings the scope digest is made of, for stored
        // records with each scope field absent, empty or set, and queries likewise.
        let services: [String?] = [nil, "", precomposed, decomposed]
        let groups: [String?] = [nil, "", "group"]
        let syncs: [Bool?] = [nil, false, true]
        var records: [Attributes] = []
        for service in services {
            for group in groups {
                for sync in syncs { records.append(Attributes(service: service, account: "k", accessGroup: group, synchronizable: sync, label: "l")) }
            }
        }
        for x in records {
            for y in records {
                let expected = RecordCoding.scopeMessage(.genericPassword, x) == RecordCoding.scopeMessage(.genericPassword, y)
                #expect(holds(.genericPassword, x, y) == expected, "\(x) in \(y)'s scope")
            }
        }
        // A record cut short or with a length past its end is never in scope.
        var cut = RecordCoding.encode(a)
        cut.removeLast()
        #expect(!cut.withUnsafeBytes { ScopeCheck(.genericPassword, a).holds(in: $0) })
    }

    @Test("associated data: the one-allocation writer gives the bytes the appending one gave, in both formats")
    func associatedData() {
        let vaultID = (0..<16).map { UInt8($0) }, identity = (0..<32).map { UInt8(255 - $0) }
        for generation: UInt64 in [0, 1, 0x0102_0304_0506_0708] {
            for part in [RecordCoding.Part.attributes, .value] {
                var plain = Array("SKCV-item".utf8)
                plain += withUnsafeBytes(of: UInt16(generation == 0 ? 1 : 2).bigEndian) { Array($0) }
                plain += vaultID + identity + [ItemClass.internetPassword.code, 0x23, part.rawValue]
                if generation > 0 { plain += withUnsafeBytes(of: generation.bigEndian) { Array($0) } }
                let fast = RecordCoding.itemAssociatedData(
                    vaultID: vaultID, identity: identity, itemClass: .internetPassword, protection: 0x23, part: part, generation: generation)
                #expect(fast == plain, "generation \(generation), part \(part)")
            }
        }
    }

    @Test("record encoding: text copied from each string gives the bytes the per-field arrays gave, for every field")
    func recordEncoding() {
        var a = Attributes(
            service: "svc", account: "caf\u{E9}", accessGroup: "", synchronizable: true, server: "example.com",
            protocol: InternetProtocol(rawValue: "htps"), authenticationType: AuthenticationType(rawValue: "form"), port: 443, path: "/p",
            securityDomain: "realm", accessibility: .afterFirstUnlock, label: "l", comment: "c", description: "d", generic: Data([1, 2]),
            creator: 7, type: 9, isInvisible: false, isNegative: true, accessControl: .userPresence)
        a.accountIsData = true
        a.creationDate = Date(timeIntervalSince1970: 1_700_000_000.123)
        a.modificationDate = Date(timeIntervalSince1970: 1_700_000_001)
        var plain: [UInt8] = []
        for field in AttributeField.allCases {
            guard let bytes = field.encode(a) else { continue }
            plain.append(field.rawValue)
            plain += withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { Array($0) }
            plain += bytes
        }
        #expect(RecordCoding.encode(a) == plain)
        #expect(plain.withUnsafeBytes { RecordCoding.decodeAttributes($0) }?.account == "caf\u{E9}")
        #expect(RecordCoding.identityMessage(.internetPassword, a).starts(with: [0x49, ItemClass.internetPassword.code]))
    }
}

extension ShortcutEquivalenceTests {
    @Test("paths: the already-standard shortcut agrees with the full standardisation")
    func standardPaths() {
        let paths = [
            "/", "/a", "/a/b.keychain", "/a/.b", "/a/..b", "/a/b.", "/a/...", "//a", "/a//b", "/a/", "/a/.", "/a/..", "/./a", "/../a",
            "/a/./b", "/a/../b", "a/b", "", "~", "~/x", ".", "/a/b/c.d/e", "/é/ü",
        ]
        for path in paths {
            let full = FileSystem.standardizedComponentwise(path, home: "/home/u")
            #expect(FileSystem.isStandardAbsolute(path) == (path.hasPrefix("/") && full == path), "\(path) → \(full)")
            #expect(FileSystem.standardized(path, home: "/home/u") == full, "\(path)")
        }
    }
}

extension ShortcutEquivalenceTests {
    @Test("environment: read from environ byte-wise, the same dictionary Foundation builds")
    func environment() {
        // (No setenv here: other suites read the environment on other threads meanwhile.)
        let ours = ProcessEnvironment.current
        #expect(ours == ProcessInfo.processInfo.environment)
        #expect(!ours.isEmpty)
        for (name, value) in ours.prefix(5) { #expect(ProcessEnvironment.value(name) == value) }
    }
}

extension ShortcutEquivalenceTests {
    @Test("statement slots: every slot has its own number, and a connection keeps one prepared statement per slot, of its text")
    func statementSlots() throws {
        let first = StatementSlot("SELECT 1"), second = StatementSlot("SELECT 2")
        #expect(first.index != second.index)
        let directory = TemporaryDirectory()
        let connection = try Connection(path: directory.path + "/slots.sqlite", create: true)
        let statement = try connection.statement(second)
        #expect(try connection.statement(second) === statement, "prepared once")
        #expect(try connection.statement(first) !== statement)
        #expect(
            try connection.statement(first).with([]) { (s: Statement) throws(SQLiteError) -> Int64 in
                _ = try s.step(); return s.integer(0)
            } == 1)
        #expect(
            try statement.with([]) { (s: Statement) throws(SQLiteError) -> Int64 in
                _ = try s.step(); return s.integer(0)
            } == 2)
    }
}
