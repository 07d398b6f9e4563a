import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The memo of identity digests remembers what a digest depends on, and nothing more.
@Suite("Identity memo")
struct IdentityMemoTests {
    @Test("a memo key keeps the identity fields only: no label, comment or generic data stays in memory with it")
    func keyKeepsIdentityOnly() {
        let generic = Attributes(service: "s", account: "a", accessGroup: "g", label: "l", comment: "c", generic: Data([1, 2, 3]))
        let key = IdentityMemoKey(itemClass: .genericPassword, attributes: generic).remembered
        #expect(key.attributes.service == "s" && key.attributes.account == "a" && key.attributes.accessGroup == "g")
        #expect(key.attributes.label == nil && key.attributes.comment == nil && key.attributes.generic == nil)

        let internet = Attributes(account: "a", server: "example.com", port: 443, label: "l", generic: Data([4]))
        let internetKey = IdentityMemoKey(itemClass: .internetPassword, attributes: internet).remembered
        #expect(internetKey.attributes.server == "example.com" && internetKey.attributes.port == 443)
        #expect(internetKey.attributes.label == nil && internetKey.attributes.generic == nil)
    }

    @Test("items that differ only outside their identity share one memo entry")
    func sameIdentityOneEntry() {
        let first = IdentityMemoKey(itemClass: .genericPassword, attributes: Attributes(service: "s", account: "a", label: "one"))
        let second = IdentityMemoKey(itemClass: .genericPassword, attributes: Attributes(service: "s", account: "a", label: "two", generic: Data([9])))
        #expect(first == second)
    }

    @Test("accounts that differ only in Unicode form (composed é, decomposed e + ◌́) are two items, as their bytes are, whichever is read first")
    func unicodeFormsAreDistinctItems() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault(directory.vaultConfiguration())
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed, "Swift calls them equal; the keychain goes by bytes")
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: composed), value: SecretBytes(utf8: "composed")))
        #expect(try Self.value(vault, composed) == "composed")
        #expect(try Self.value(vault, decomposed) == nil)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: decomposed), value: SecretBytes(utf8: "decomposed")))
        #expect(try Self.value(vault, decomposed) == "decomposed")
        #expect(try Self.value(vault, composed) == "composed")
    }

    /// The value of the item of service `s` and `account`, or nil when there is none.
    static func value(_ vault: Vault, _ account: String) throws -> String? {
        let found = try? vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: account), limit: .one, returnData: true))
        return found?.first?.value.map { String(decoding: $0.data, as: UTF8.self) }
    }
}
