import FoundationEssentials
import KeychainCore
import KeychainTestSupport
import Testing

@testable import KeychainServe

/// The login collection's search over a real vault: through the pairs' id lists, through the
/// scope of a pair too common to list, and over items stored before the lists were kept.
@Suite("keychain serve's search over the vault")
struct VaultCollectionSearchTests {
    /// Items 0..<count of one program: the same service and schema, an account each; every
    /// third also has a `kind` pair.
    private func fill(_ collection: VaultCollection, count: Int) throws {
        for n in 0..<count {
            var attributes = ["xdg:schema": "org.example.Password", "service": "a-program", "account": "user-\(n)"]
            if n % 3 == 0 { attributes["kind"] = "third" }
            _ = try collection.create(
                SecretItemRecord(label: "item \(n)", attributes: attributes, contentType: "text/plain"), secret: SecretBytes(utf8: "secret-\(n)"), replace: false)
        }
    }

    private func accounts(_ collection: VaultCollection, _ attributes: [String: String]) throws -> [String] {
        try collection.search(attributes).map { try collection.record($0).attributes["account"] ?? "" }.sorted()
    }

    @Test("a search finds exactly the items with every pair, whether its pairs are listed or too common to list")
    func searchAcrossListedAndCountedPairs() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault(directory.vaultConfiguration())
        // A limit of 4: the service, the schema and `kind` outgrow their lists, accounts do not.
        let collection = VaultCollection(name: "login", label: "Login", store: vault, listLimit: 4)
        collection.countPairsIfNeeded()
        try fill(collection, count: 9)
        #expect(try accounts(collection, ["service": "a-program", "account": "user-4"]) == ["user-4"])
        #expect(try accounts(collection, ["account": "user-6", "kind": "third"]) == ["user-6"])
        #expect(try accounts(collection, ["account": "user-5", "kind": "third"]).isEmpty)
        #expect(try accounts(collection, ["service": "a-program", "kind": "third"]) == ["user-0", "user-3", "user-6"])
        #expect(try accounts(collection, ["service": "a-program"]).count == 9)
        #expect(try accounts(collection, ["service": "another-program"]).isEmpty)
        // A change of attributes moves the item between lists; a delete takes it off them.
        let id = try collection.search(["account": "user-3"])[0]
        try collection.update(id, label: nil, attributes: ["service": "a-program", "account": "renamed"], secret: nil, contentType: nil)
        #expect(try accounts(collection, ["account": "user-3"]).isEmpty)
        #expect(try accounts(collection, ["account": "renamed", "service": "a-program"]) == ["renamed"])
        #expect(try accounts(collection, ["service": "a-program", "kind": "third"]) == ["user-0", "user-6"])
        try collection.delete(id)
        #expect(try accounts(collection, ["account": "renamed"]).isEmpty)
        #expect(try accounts(collection, ["service": "a-program"]).count == 8)
    }

    @Test("items stored before the id lists were kept are listed at the next start, and found")
    func itemsFromBeforeTheListsAreListed() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault(directory.vaultConfiguration())
        try fill(VaultCollection(name: "login", label: "Login", store: vault), count: 5)
        // As a vault served before: no lists, no marker.
        _ = try vault.write([.delete(Query(.genericPassword, attributes: Attributes(accessGroup: PairTally.group, synchronizable: false)))])
        let before = VaultCollection(name: "login", label: "Login", store: vault)
        #expect(try accounts(before, ["service": "a-program", "account": "user-2"]) == ["user-2"], "by scope, without lists")
        before.countPairsIfNeeded()
        #expect(PairTally(collection: "login", store: vault).isComplete)
        #expect(PairTally(collection: "login", store: vault).size("service", "a-program") == (5, true))
        let after = VaultCollection(name: "login", label: "Login", store: vault)
        #expect(try accounts(after, ["service": "a-program", "account": "user-2"]) == ["user-2"])
        #expect(try accounts(after, ["kind": "third"]) == ["user-0", "user-3"])
    }
}
