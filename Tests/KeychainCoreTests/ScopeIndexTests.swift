import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// A read by scope goes through the `items_scope` index, which someone who
/// can write the file can rebuild without some rows or with other rows; the read is held to
/// the table, so a listing or a clear refuses instead of answering for fewer items.
@Suite("An edited scope index is refused, never a shorter listing or a partial clear")
struct ScopeIndexTests {
    let directory = TemporaryDirectory()

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    /// Two items of Valet1 (rows 1 and 2), one of Other (row 3), set by the command.
    func populate(_ path: String) throws {
        for (identifier, key) in [("Valet1", "first"), ("Valet1", "second"), ("Other", "third")] {
            let set = try keychain(["set", "--vault", path, "--identifier", identifier, key], input: "secret-\(key)")
            try #require(set.status == 0, "\(set.stderr)")
        }
    }

    @Test("the command: list and clear of the Valet refuse (exit 4, naming the index), and the hidden secret stays", arguments: ScopeIndexEdit.allCases)
    func command(_ edit: ScopeIndexEdit) throws {
        let path = directory.vaultPath("\(edit).keychain")
        try populate(path)
        try edit.apply(to: path, row: 1, other: 3)
        #expect(try ScopeIndexEdit.quickCheck(path) == "ok", "SQLite's quick check does not see the edit")

        let list = try keychain(["list", "--vault", path, "--identifier", "Valet1"])
        #expect(list.status == 4 && list.stderr.contains("scope"), "list: \(list.status) \(list.output) \(list.stderr)")
        #expect(!list.output.contains("second"), "no partial listing is printed")
        let clear = try keychain(["clear", "--vault", path, "--identifier", "Valet1"])
        #expect(clear.status == 4 && clear.stderr.contains("scope"), "clear: \(clear.status) \(clear.stderr)")
        let get = try keychain(["get", "--vault", path, "--identifier", "Valet1", "first"])
        #expect(get.output == "secret-first\n", "the item the index hid is still there: \(get.stderr)")
    }

    static func scope(_ service: String, account: String? = nil) -> Attributes {
        var attributes = Attributes(service: service, account: account)
        attributes.accessGroup = "group"
        attributes.synchronizable = false
        return attributes
    }

    @Test("the library: a listing and a delete by scope throw tampered; nothing is deleted", arguments: ScopeIndexEdit.allCases)
    func library(_ edit: ScopeIndexEdit) throws {
        let configuration = directory.vaultConfiguration(name: "\(edit).keychain")
        let vault = try Vault(configuration)
        for (service, account) in [("Valet1", "first"), ("Valet1", "second"), ("Other", "third")] {
            try vault.add(Item(.genericPassword, attributes: Self.scope(service, account: account), value: secret("secret-\(account)")))
        }
        try edit.apply(to: configuration.location.path, row: 1, other: 3)
        let reopened = try Vault(configuration)
        // Access group, service and synchronizable: a Valet's scope, read through the index.
        let scope = Query(.genericPassword, attributes: Self.scope("Valet1"))
        expectTampered({ _ = try reopened.copyMatching(scope) }, "a listing through the edited index")
        expectTampered({ _ = try reopened.delete(scope) }, "a clear through the edited index")
        if edit != .partial {
            expectTampered({ _ = try reopened.copyMatching(Query(.genericPassword, attributes: Self.scope("Other"))) }, "the other scope's listing")
        }
        let left = try reopened.copyMatching(Query(.genericPassword, returnData: true)).compactMap { $0.value?.string }.sorted()
        #expect(left == ["secret-first", "secret-second", "secret-third"], "a listing by class reads the table: every item is there")
    }

    @Test("an intact index serves listings and clears by scope, from a second connection and after a commit from another one")
    func intactIndex() throws {
        let configuration = directory.vaultConfiguration()
        let vault = try Vault(configuration)
        for account in ["a", "b"] { try vault.add(Item(.genericPassword, attributes: Self.scope("S", account: account), value: secret(account))) }
        let other = try Vault(configuration)
        let scope = Query(.genericPassword, attributes: Self.scope("S"))
        #expect(try other.copyMatching(scope).count == 2)
        try vault.add(Item(.genericPassword, attributes: Self.scope("S", account: "c"), value: secret("c")))
        #expect(try other.copyMatching(scope).count == 3)
        #expect(try other.delete(scope) == 3)
        #expect(throws: StoreError.itemNotFound) { try vault.copyMatching(scope) }
    }

    @Test("a clear that cannot reach every item of its scope (some locked) fails and deletes nothing")
    func clearWithLockedItemsFails() throws {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.changePassphrase(from: nil, to: secret("pw"))
        for (account, accessibility) in [("u", Accessibility.whenUnlocked), ("afu", .afterFirstUnlock)] {
            var attributes = Self.scope("S", account: account)
            attributes.accessibility = accessibility
            try vault.add(Item(.genericPassword, attributes: attributes, value: secret(account)))
        }
        vault.lock()
        #expect(throws: StoreError.locked) { try vault.delete(Query(.genericPassword, attributes: Self.scope("S"))) }
        try vault.unlock(passphrase: secret("pw"))
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Self.scope("S"))).count == 2, "nothing was deleted")
        #expect(try vault.delete(Query(.genericPassword, attributes: Self.scope("S"))) == 2)
    }
}
