import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

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
