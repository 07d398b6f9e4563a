import KeychainCore
import Testing

@testable import KeychainServe

/// The daemon's tables, each with its own rules: who owns a session or a prompt, how clients
/// share the room, which aliases a collection takes with it.
@Suite("keychain serve's tables")
struct DaemonTablesTests {
    @Test("a client at its own limit makes room from its own least recently used object, never from another client's")
    func ownLimitReclaimsOwnOldest() {
        var table = ClientObjects<Int>(perClient: 3, total: 100)
        _ = table.insert(0, at: "other", owner: ":1.2")
        for index in 1...3 { _ = table.insert(index, at: "a\(index)", owner: ":1.1") }
        _ = table.use("a1")
        let reclaimed = table.insert(4, at: "a4", owner: ":1.1")
        #expect(reclaimed.map(\.path) == ["a2"])
        #expect(table.count(ownedBy: ":1.1") == 3)
        #expect(table.peek("other")?.value == 0)
        #expect(table.peek("a1") != nil)
    }

    @Test("a full table makes room from the client that holds the most, so a newcomer is always served")
    func fullTableReclaimsFromBiggestHolder() {
        var table = ClientObjects<Int>(perClient: 4, total: 6)
        for index in 0..<4 { _ = table.insert(index, at: "big\(index)", owner: ":1.1") }
        for index in 0..<2 { _ = table.insert(index, at: "small\(index)", owner: ":1.2") }
        let reclaimed = table.insert(9, at: "new", owner: ":1.3")
        #expect(reclaimed.map(\.owner) == [":1.1"])
        #expect(table.count == 6)
        #expect(table.count(ownedBy: ":1.2") == 2)
        #expect(table.peek("new")?.owner == ":1.3")
        let removed = table.removeAll(ownedBy: ":1.1")
        #expect(removed.count == 3)
        #expect(table.count == 3)
    }

    @Test("a session is used and closed only by the client that opened it, and closes when it leaves")
    func sessionsBelongToTheirClient() throws {
        var sessions = SessionTable()
        let (_, path) = try sessions.open(algorithm: "plain", input: .string(""), for: ":1.1")
        #expect(Self.refusal { () throws(ServiceError) in _ = try sessions.session(path, for: ":1.2") } == .noSession)
        #expect(Self.refusal { () throws(ServiceError) in try sessions.close(path, by: ":1.2") } == .noSession)
        let own = try sessions.session(path, for: ":1.1")
        #expect(own.owner == ":1.1")
        sessions.clientLeft(":1.1")
        #expect(!sessions.contains(path))
        #expect(Self.refusal { () throws(ServiceError) in _ = try sessions.open(algorithm: "rot13", input: .string(""), for: ":1.1") } == .notSupported)
        #expect(sessions.isEmpty)
    }

    @Test("one client opening sessions far past its limit is never refused, and leaves every other client's sessions open")
    func sessionsPastTheLimit() throws {
        var sessions = SessionTable(perClient: 8, total: 16)
        let (_, kept) = try sessions.open(algorithm: "plain", input: .string(""), for: ":1.2")
        for _ in 0..<100 { _ = try sessions.open(algorithm: "plain", input: .string(""), for: ":1.1") }
        #expect(sessions.count(ownedBy: ":1.1") == 8)
        let other = try sessions.session(kept, for: ":1.2")
        #expect(other.owner == ":1.2")
    }

    @Test("session and prompt paths are random, not counted")
    func unguessablePaths() throws {
        var sessions = SessionTable()
        var prompts = PromptTable()
        let first = try sessions.open(algorithm: "plain", input: .string(""), for: ":1.1").path
        let second = try sessions.open(algorithm: "plain", input: .string(""), for: ":1.1").path
        #expect(first != second)
        let prompt = ObjectPath.promptPath(prompts.add(for: ":1.1").id)
        for path in [first, second, prompt] {
            let id = path.split(separator: "/").last!
            #expect(id.count == 16 && ItemID.isWellFormed(id), "\(path)")
        }
    }

    @Test("a prompt answers only the client that got it; another client's Prompt or Dismiss is refused")
    func promptsBelongToTheirClient() throws {
        var prompts = PromptTable()
        let id = prompts.add(for: ":1.1").id
        try prompts.check(id, by: ":1.1")
        #expect {
            try prompts.check(id, by: ":1.2")
        } throws: { error in
            (error as? ServiceError)?.name == .accessDenied
        }
        let cancelled = prompts.clientLeft(":1.2")
        #expect(cancelled == nil && prompts.contains(id))
        _ = prompts.clientLeft(":1.1")
        #expect(!prompts.contains(id))
    }

    @Test("a client calling Unlock in a loop loses its own oldest prompts, and another client's prompt stays")
    func promptsPastTheLimit() {
        var prompts = PromptTable(perClient: 4, total: 8)
        let other = prompts.add(for: ":1.2").id
        var reclaimed: [String] = []
        for _ in 0..<20 { reclaimed += prompts.add(for: ":1.1").reclaimed }
        #expect(reclaimed.count == 16)
        #expect(prompts.count(ownedBy: ":1.1") == 4)
        #expect(prompts.contains(other))
    }

    /// The error name `body` was refused with, or nil when it was not.
    static func refusal(_ body: () throws(ServiceError) -> Void) -> ServiceError.Name? {
        do {
            try body()
            return nil
        } catch {
            return error.name
        }
    }

    @Test("the method table holds each method once, with the specification's signatures, and only GetSecret and GetSecrets carry secrets")
    func methodTable() {
        let rows = SecretServiceDaemon.methodTable
        #expect(Set(rows.map { "\($0.interface).\($0.name)" }).count == rows.count)
        #expect(rows.count == 8 + 3 + 3 + 1 + 2 + 3)
        #expect(rows.filter(\.carriesSecret).map(\.name).sorted() == ["GetSecret", "GetSecrets"])
        #expect(SecretServiceDaemon.methods[ServiceInterface.name]?["GetSecrets"]?.arguments == "aoo")
        #expect(SecretServiceDaemon.methods[CollectionInterface.name]?["CreateItem"]?.arguments == "a{sv}(oayays)b")
        #expect(SecretServiceDaemon.methods[PromptInterface.name]?["Prompt"]?.arguments == "s")
    }

    @Test("removing a collection removes the aliases naming it; an alias never names a collection not served")
    func registryAliases() throws {
        var registry = CollectionRegistry([MemoryCollection(name: "session", label: ""), MemoryCollection(name: "work", label: "")])
        let addedTwice = registry.add(MemoryCollection(name: "work", label: ""))
        let aliased = registry.setAlias("default", to: "work")
        let aliasedNothing = registry.setAlias("other", to: "nowhere")
        #expect(!addedTwice && aliased && !aliasedNothing)
        #expect(try registry.collection(.collection(name: "default", alias: true)).name == "work")
        registry.remove("work")
        #expect(registry.aliases.isEmpty)
        #expect(registry.names == ["session"])
        #expect(throws: ServiceError.self) { try registry.collection(.collection(name: "default", alias: true)) }
    }
}
