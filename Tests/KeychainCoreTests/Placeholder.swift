import Testing
import Foundation
@testable import KeychainCore

@Test func smoke() throws {
    let dir = TemporaryDirectory()
    let vault = try Vault(dir.vaultConfiguration())
    try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("hello")))
    let items = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", account: "a"), limit: .one, returnData: true))
    #expect(items.first?.value?.string == "hello")
    #expect(items.first?.attributes.accessibility == .whenUnlocked)
    #expect(throws: StoreError.duplicateItem) { try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("x"))) }
    try vault.changePassphrase(from: nil, to: secret("pw"))
    let again = try Vault(dir.vaultConfiguration())
    #expect(throws: StoreError.locked) { try again.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)) }
    try again.unlock(passphrase: secret("pw"))
    #expect(try again.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)).first?.value?.string == "hello")
}
