import FoundationEssentials
import KeychainCore
import Testing

@testable import KeychainServe

/// The daemon's pure parts: what it parses from clients and from its own vault rows.
@Suite("keychain serve's parsers")
struct DaemonPartsTests {
    @Test("an item record round-trips, and every cut or flipped copy of it is refused, never misread")
    func recordCoding() {
        let attributes = ["xdg:schema": "org.example.Password", "user": "ci", "": "empty name", "é": ""]
        let encoded = ItemRecordCoding.encode(attributes: attributes, contentType: "text/plain")
        let decoded = ItemRecordCoding.decode(encoded)
        #expect(decoded?.attributes == attributes)
        #expect(decoded?.contentType == "text/plain")
        let bytes = [UInt8](encoded)
        for length in 0..<bytes.count {
            #expect(ItemRecordCoding.decode(Data(bytes[0..<length])) == nil, "cut at \(length)")
        }
        #expect(ItemRecordCoding.decode(Data(bytes + [0])) == nil)
        // A flipped byte either fails to decode or decodes to other text: it never crashes.
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x80
            _ = ItemRecordCoding.decode(Data(flipped))
        }
    }

    @Test("two attribute pairs never share index rows, however their names and values are cut")
    func pairScopesAreUnambiguous() {
        let a = ItemRecordCoding.pairScope(collection: "login", name: "a=b", value: "c")
        let b = ItemRecordCoding.pairScope(collection: "login", name: "a", value: "b=c")
        #expect(a != b)
        #expect(ItemRecordCoding.pairScope(collection: "login", name: "x", value: "1") != ItemRecordCoding.pairScope(collection: "work", name: "x", value: "1"))
    }

    @Test("object paths: the specification's tree is parsed, anything else names no object")
    func objectPaths() {
        #expect(ObjectPath("/org/freedesktop/secrets") == .service)
        #expect(ObjectPath("/org/freedesktop/secrets/collection/login") == .collection(name: "login", alias: false))
        #expect(ObjectPath("/org/freedesktop/secrets/aliases/default") == .collection(name: "default", alias: true))
        #expect(ObjectPath("/org/freedesktop/secrets/collection/login/00ff") == .item(collection: "login", alias: false, id: "00ff"))
        #expect(ObjectPath("/org/freedesktop/secrets/session/7") == .session("7"))
        for path in [
            "/", "/org/freedesktop/secret", "/org/freedesktop/secrets/", "/org/freedesktop/secrets/collection",
            "/org/freedesktop/secrets/collection/login/NotHex", "/org/freedesktop/secrets/collection/login/00ff/x",
            "/org/freedesktop/secrets//login", "/org/freedesktop/secrets/other/x",
        ] {
            #expect(ObjectPath(path) == nil, "\(path)")
        }
    }

    @Test("Diffie-Hellman public values outside 2...p-2 are refused; inside, both sides derive the same key")
    func diffieHellmanBounds() throws {
        let prime = [UInt8](repeating: 0xFF, count: 8) + [0xC9, 0x0F, 0xDA, 0xA2]  // the prime's first bytes
        for value in [[], [0], [1], [UInt8](repeating: 0xFF, count: 128), [UInt8](repeating: 2, count: 300), prime + [UInt8](repeating: 0xFF, count: 116)] {
            #expect(throws: ServiceError.self) { try DiffieHellman.agree(clientPublic: SecretBytes(value)) }
        }
        let agreed = try DiffieHellman.agree(clientPublic: SecretBytes([2]))
        #expect(agreed.publicValue.count == 128)
        #expect(agreed.key.count == 16)
    }

    @Test("the search reads the most selective pair's index rows: never xdg:schema when another pair is given")
    func mostSelectivePair() {
        let uncounted: (String, String) -> Int? = { _, _ in nil }
        #expect(VaultCollection.mostSelective([:], counts: uncounted) == nil)
        #expect(VaultCollection.mostSelective(["xdg:schema": "org.example.a.very.long.schema.name", "id": "7"], counts: uncounted)! == ("id", "7"))
        #expect(VaultCollection.mostSelective(["port": "22", "host": "example.org"], counts: uncounted)! == ("host", "example.org"))
        #expect(VaultCollection.mostSelective(["xdg:schema": "s"], counts: uncounted)! == ("xdg:schema", "s"))
    }

    @Test("the search reads the pair that names the fewest items by its tally, whatever the lengths of the values")
    func countedPairComesFirst() {
        // A program's service names all its items, an account one: by length alone the service would be read.
        let counts: (String, String) -> Int? = { name, _ in ["service": 10_000, "account": 1][name] }
        #expect(VaultCollection.mostSelective(["service": "a-long-program-name", "account": "ann"], counts: counts)! == ("account", "ann"))
        // A pair without a tally comes after every counted one.
        #expect(VaultCollection.mostSelective(["service": "a-long-program-name", "id": "12345678901234567890"], counts: counts)! == ("service", "a-long-program-name"))
    }

    @Test("a signature splits into its complete types, as Introspect lists arguments")
    func completeTypes() {
        #expect(IntrospectableInterface.completeTypes("a{sv}(oayays)b") == ["a{sv}", "(oayays)", "b"])
        #expect(IntrospectableInterface.completeTypes("aoao") == ["ao", "ao"])
        #expect(IntrospectableInterface.completeTypes("a{o(oayays)}") == ["a{o(oayays)}"])
        #expect(IntrospectableInterface.completeTypes("") == [])
    }
}
