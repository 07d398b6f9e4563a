import Foundation
import Testing
@testable import KeychainCore
import KeychainTestSupport

@Suite("Items: the Keychain's add / copy / update / delete semantics in the vault")
struct ItemModelTests {
    let directory = TemporaryDirectory()

    func vault() throws -> Vault { try Vault(directory.vaultConfiguration()) }

    static let genericAttributes = Attributes(
        service: "svc", account: "acct", accessGroup: "group.x", synchronizable: false,
        accessibility: .afterFirstUnlock, label: "A label", comment: "A comment", description: "A description",
        generic: Data([0, 1, 2, 255]), creator: 0x6162_6364, type: 0x7778_797A, isInvisible: true, isNegative: false)

    static let internetAttributes = Attributes(
        account: "alice", accessGroup: "", synchronizable: true, server: "example.com", protocol: .https,
        authenticationType: .htmlForm, port: 8443, path: "/login", securityDomain: "realm",
        accessibility: .whenUnlocked, label: "site", comment: "c", description: "d", generic: Data("g".utf8),
        creator: 1, type: 2, isInvisible: false, isNegative: true)

    @Test("every attribute of both classes round-trips, with dates set by the store",
          arguments: [(ItemClass.genericPassword, genericAttributes), (ItemClass.internetPassword, internetAttributes)])
    func everyAttributeRoundTrips(itemClass: ItemClass, attributes: Attributes) throws {
        let vault = try vault()
        let before = Date()
        try vault.add(Item(itemClass, attributes: attributes, value: secret("s3cret")))
        let found = try #require(try vault.copyMatching(Query(itemClass, attributes: attributes, limit: .one, returnData: true)).first)
        #expect(found.value?.string == "s3cret")
        var stored = found.attributes
        let created = try #require(stored.creationDate)
        let modified = try #require(stored.modificationDate)
        #expect(created.timeIntervalSince(before) > -1 && created == modified)
        stored.creationDate = nil
        stored.modificationDate = nil
        #expect(stored == attributes.normalizedIdentity(for: itemClass))
    }

    @Test("a query matches every attribute it names; an attribute it does not name matches anything")
    func queryMatchesEveryNamedAttribute() throws {
        let vault = try vault()
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", label: "L1"), value: secret("1")))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "b", label: "L2"), value: secret("2")))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "t", account: "a", label: "L1"), value: secret("3")))
        try vault.add(Item(.internetPassword, attributes: Attributes(account: "a", server: "s"), value: secret("4")))
        func accounts(_ query: Query) throws -> [String] {
            (try? vault.copyMatching(query))?.map { "\($0.attributes.service ?? $0.attributes.server ?? "")/\($0.attributes.account ?? "")" }.sorted() ?? []
        }
        #expect(try accounts(Query(.genericPassword, attributes: Attributes(service: "s"))) == ["s/a", "s/b"])
        #expect(try accounts(Query(.genericPassword, attributes: Attributes(account: "a"))) == ["s/a", "t/a"])
        #expect(try accounts(Query(.genericPassword, attributes: Attributes(label: "L1"))) == ["s/a", "t/a"])
        #expect(try accounts(Query(.genericPassword, attributes: Attributes(service: "s", label: "L1"))) == ["s/a"])
        #expect(try accounts(Query(.genericPassword, attributes: Attributes(service: "s", label: "nope"))) == [])
        #expect(try accounts(Query(attributes: Attributes(account: "a"))) == ["s/a", "s/a", "t/a"])
        #expect(try accounts(Query(.internetPassword)) == ["s/a"])
        #expect(try accounts(Query(.genericPassword, attributes: Attributes(accessibility: .afterFirstUnlock))) == [])
        #expect(try vault.copyMatching(Query(.genericPassword, limit: .one)).count == 1)
        #expect(throws: StoreError.itemNotFound) { try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "zzz"))) }
    }

    @Test("results carry values only when asked for")
    func valuesOnlyWhenAsked() throws {
        let vault = try vault()
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))).first?.value == nil)
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)).first?.value?.string == "v")
    }

    @Test("adding an item whose identity exists fails with duplicateItem and keeps the first")
    func duplicateAddFails() throws {
        let vault = try vault()
        let attributes = Attributes(service: "s", account: "a")
        try vault.add(Item(.genericPassword, attributes: attributes, value: secret("first")))
        #expect(throws: StoreError.duplicateItem) {
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessibility: .afterFirstUnlock, label: "x"), value: secret("second")))
        }
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: attributes, returnData: true)).first?.value?.string == "first")
        // Same service and account in another access group, or synchronizable, is another item.
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessGroup: "g"), value: secret("g")))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", synchronizable: true), value: secret("sync")))
    }

    @Test("update changes only the attributes it names, keeps the creation date, and moves identity safely")
    func updateChangesOnlyWhatItNames() throws {
        let vault = try vault()
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", label: "keep", comment: "old"), value: secret("v1")))
        let before = try #require(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))).first)
        Thread.sleep(forTimeInterval: 0.01)
        try vault.update(Query(.genericPassword, attributes: Attributes(service: "s", account: "a")), attributes: Attributes(comment: "new"), value: nil)
        let after = try #require(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)).first)
        #expect(after.attributes.comment == "new" && after.attributes.label == "keep" && after.value?.string == "v1")
        #expect(after.attributes.creationDate == before.attributes.creationDate)
        #expect(after.attributes.modificationDate! > before.attributes.modificationDate!)
        try vault.update(Query(.genericPassword, attributes: Attributes(service: "s")), attributes: Attributes(accessibility: .afterFirstUnlock), value: secret("v2"))
        let moved = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", accessibility: .afterFirstUnlock), returnData: true))
        #expect(moved.first?.value?.string == "v2")
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "b"), value: secret("b")))
        #expect(throws: StoreError.duplicateItem) {
            try vault.update(Query(.genericPassword, attributes: Attributes(service: "s", account: "b")), attributes: Attributes(account: "a"), value: nil)
        }
        #expect(throws: StoreError.itemNotFound) {
            try vault.update(Query(.genericPassword, attributes: Attributes(service: "none")), attributes: Attributes(label: "x"), value: nil)
        }
    }

    @Test("delete removes what matches and reports how many; nothing matching is not an error")
    func deleteRemovesMatches() throws {
        let vault = try vault()
        for account in ["a", "b", "c"] {
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: account), value: secret(account)))
        }
        #expect(try vault.delete(Query(.genericPassword, attributes: Attributes(service: "s", account: "b"))) == 1)
        #expect(try vault.delete(Query(.genericPassword, attributes: Attributes(service: "s", account: "b"))) == 0)
        #expect(try vault.delete(Query(.genericPassword, attributes: Attributes(service: "s"))) == 2)
        #expect(throws: StoreError.itemNotFound) { try vault.copyMatching(Query(.genericPassword)) }
    }

    @Test("a batch of writes is one transaction: a failing operation undoes the ones before it")
    func batchIsAllOrNothing() throws {
        let vault = try vault()
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "exists"), value: secret("x")))
        #expect(throws: StoreError.duplicateItem) {
            try vault.write([
                .add(Item(.genericPassword, attributes: Attributes(service: "s", account: "new1"), value: secret("1"))),
                .delete(Query(.genericPassword, attributes: Attributes(service: "s", account: "exists"))),
                .add(Item(.genericPassword, attributes: Attributes(service: "s", account: "new2"), value: secret("2"))),
                .add(Item(.genericPassword, attributes: Attributes(service: "s", account: "new2"), value: secret("dup"))),
            ])
        }
        let accounts = try vault.copyMatching(Query(.genericPassword)).compactMap(\.attributes.account)
        #expect(accounts == ["exists"])
    }

    @Test("values up to 1 MiB are stored; larger ones are refused with valueTooLarge")
    func valueSizeLimit() throws {
        let vault = try vault()
        let limit = 1 << 20
        let big = SecretBytes([UInt8](repeating: 7, count: limit))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "big"), value: big))
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(account: "big"), returnData: true)).first?.value == big)
        #expect(throws: StoreError.valueTooLarge(limit: limit)) {
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "bigger"), value: SecretBytes([UInt8](repeating: 7, count: limit + 1))))
        }
    }

    @Test("items persist across closing and reopening the vault")
    func persistsAcrossReopen() throws {
        do {
            let vault = try vault()
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("kept")))
        }
        let reopened = try vault()
        #expect(try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)).first?.value?.string == "kept")
    }

    @Test("an item written by the library is read by a separate process, and the reverse")
    func persistsAcrossProcesses() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "svc", account: "from-library"), value: secret("L")))
        let read = try KeychainExecutable.run(["get", "--vault", configuration.location.path, "--service", "svc", "from-library"], home: directory.path)
        #expect(read.status == 0 && read.output == "L\n")
        let written = try KeychainExecutable.run(["set", "--vault", configuration.location.path, "--service", "svc", "from-process"],
                                                 input: Data("P".utf8), home: directory.path)
        #expect(written.status == 0)
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(account: "from-process"), returnData: true)).first?.value?.string == "P")
    }
}

@Suite("Reads that skip what they need not decrypt")
struct MinimalReadTests {
    let directory = TemporaryDirectory()

    @Test("a read without attributes returns the value and what the query named, and still honours every named attribute")
    func readWithoutAttributes() throws {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessGroup: "", synchronizable: false, label: "L"), value: secret("v")))
        let exact = Attributes(service: "s", account: "a", accessGroup: "", synchronizable: false)
        let found = try vault.copyMatching(Query(.genericPassword, attributes: exact, limit: .one, returnData: true, returnAttributes: false))
        #expect(found.first?.value?.string == "v")
        #expect(found.first?.attributes.label == nil && found.first?.attributes.account == "a")
        #expect(found.first?.attributes.accessibility == .whenUnlocked)
        var wrongLabel = exact
        wrongLabel.label = "other"
        #expect(throws: StoreError.itemNotFound) {
            try vault.copyMatching(Query(.genericPassword, attributes: wrongLabel, limit: .one, returnData: true, returnAttributes: false))
        }
    }
}
