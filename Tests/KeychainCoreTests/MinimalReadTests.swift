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

    @Test("a listing that names the fields it reads gets those decoded, and the match still checks every named attribute")
    func listingDecodesOnlyReturnedFields() throws {
        let vault = try Vault(directory.vaultConfiguration())
        for account in ["a", "b"] {
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: account, label: "L-\(account)", comment: "c"), value: secret("v")))
        }
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "other", account: "x"), value: secret("v")))
        var query = Query(.genericPassword, attributes: Attributes(service: "s", accessGroup: "", synchronizable: false))
        query.returnedFields = AttributeField.Mask([.account])
        let listed = try vault.copyMatching(query)
        #expect(listed.compactMap(\.attributes.account).sorted() == ["a", "b"])
        #expect(listed.allSatisfy { $0.attributes.label == nil && $0.attributes.comment == nil && $0.attributes.creationDate == nil })
        #expect(listed.allSatisfy { $0.attributes.accessibility == .whenUnlocked }, "the protection comes from the row")
        // A named attribute the digests do not cover is decoded to be matched.
        query.attributes.label = "L-b"
        #expect(try vault.copyMatching(query).compactMap(\.attributes.account) == ["b"])
        // Without the projection, every attribute comes back.
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))).allSatisfy { $0.attributes.label != nil && $0.attributes.comment == "c" })
    }

    @Test("a write whose query names returned fields still keeps every attribute of what it changes")
    func writesIgnoreReturnedFields() throws {
        let vault = try Vault(directory.vaultConfiguration())
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", label: "L", comment: "c"), value: secret("v")))
        var query = Query(.genericPassword, attributes: Attributes(service: "s", accessGroup: "", synchronizable: false))
        query.returnedFields = AttributeField.Mask([.account])
        #expect(try vault.update(query, attributes: Attributes(description: "d"), value: nil) == 1)
        let item = try #require(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(account: "a"))).first)
        #expect(item.attributes.label == "L" && item.attributes.comment == "c" && item.attributes.description == "d")
        #expect(item.attributes.creationDate != nil)
    }

    @Test("a record decoded for some fields skips the others' values but still rejects a malformed record")
    func partialDecodingStillChecksTheRecord() {
        let record = RecordCoding.encode(Attributes(service: "s", account: "a", port: 1, label: "L"))
        let partial = record.withUnsafeBytes { RecordCoding.decodeAttributes($0, fields: AttributeField.Mask([.account])) }
        #expect(partial?.account == "a" && partial?.service == nil && partial?.label == nil && partial?.port == nil)
        var truncated = record
        truncated.removeLast()
        #expect(truncated.withUnsafeBytes { RecordCoding.decodeAttributes($0, fields: AttributeField.Mask([.account])) } == nil)
        // Fields out of order (a forged record) fail even where neither is decoded.
        let swapped = RecordCoding.encode(Attributes(label: "L")) + RecordCoding.encode(Attributes(service: "s"))
        #expect(swapped.withUnsafeBytes { RecordCoding.decodeAttributes($0, fields: AttributeField.Mask([.account])) } == nil)
    }

    @Test("a listing of rows of several classes opens each with its own class's key, however they alternate")
    func listingAcrossClasses() throws {
        let vault = try Vault(directory.vaultConfiguration())
        let classes: [Accessibility] = [.whenUnlocked, .afterFirstUnlock, .whenUnlocked, .always, .afterFirstUnlock]
        for (index, accessibility) in classes.enumerated() {
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "k\(index)", accessibility: accessibility), value: secret("v\(index)")))
        }
        let listed = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", accessGroup: "", synchronizable: false)))
        #expect(listed.count == classes.count)
        for item in listed {
            let index = try #require(item.attributes.account.flatMap { Int($0.dropFirst()) })
            #expect(item.attributes.accessibility == classes[index])
        }
        #expect(try vault.accounts(matching: Query(.genericPassword, attributes: Attributes(service: "s"))).sorted() == (0..<5).map { "k\($0)" })
    }
}
