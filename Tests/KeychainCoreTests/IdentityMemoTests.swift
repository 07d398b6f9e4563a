import Foundation
import Testing

@testable import KeychainCore

/// The memo of identity digests remembers what a digest depends on, and nothing more.
@Suite("Identity memo")
struct IdentityMemoTests {
    @Test("a memo key keeps the identity fields only: no label, comment or generic data stays in memory with it")
    func keyKeepsIdentityOnly() {
        let generic = Attributes(service: "s", account: "a", accessGroup: "g", label: "l", comment: "c", generic: Data([1, 2, 3]))
        let key = IdentityMemoKey(itemClass: .genericPassword, attributes: generic)
        #expect(key.attributes.service == "s" && key.attributes.account == "a" && key.attributes.accessGroup == "g")
        #expect(key.attributes.label == nil && key.attributes.comment == nil && key.attributes.generic == nil)

        let internet = Attributes(account: "a", server: "example.com", port: 443, label: "l", generic: Data([4]))
        let internetKey = IdentityMemoKey(itemClass: .internetPassword, attributes: internet)
        #expect(internetKey.attributes.server == "example.com" && internetKey.attributes.port == 443)
        #expect(internetKey.attributes.label == nil && internetKey.attributes.generic == nil)
    }

    @Test("items that differ only outside their identity share one memo entry")
    func sameIdentityOneEntry() {
        let first = IdentityMemoKey(itemClass: .genericPassword, attributes: Attributes(service: "s", account: "a", label: "one"))
        let second = IdentityMemoKey(itemClass: .genericPassword, attributes: Attributes(service: "s", account: "a", label: "two", generic: Data([9])))
        #expect(first == second)
    }
}
