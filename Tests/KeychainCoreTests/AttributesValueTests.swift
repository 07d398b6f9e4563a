import Foundation
import Testing

@testable import KeychainCore

/// `Attributes` shares one storage between copies until one of them changes: it must still
/// behave as the plain value it was, whichever way it is changed or compared.
@Suite("Attributes are values")
struct AttributesValueTests {
    @Test("a change to a copy, by property, field by field, by merge or inside an item, never shows in the original or in other copies")
    func copiesAreIndependent() {
        let original = Attributes(service: "s", account: "a", label: "l", generic: Data([1, 2]))
        var byProperty = original
        byProperty.account = "b"
        var byField = original
        AttributeField.label.copy(from: Attributes(label: "other"), to: &byField)
        let merged = original.merging(Attributes(comment: "c"))
        var throughItem = Item(.genericPassword, attributes: original)
        throughItem.attributes.service = "t"

        #expect(original.account == "a" && original.label == "l" && original.comment == nil && original.service == "s")
        #expect(byProperty.account == "b" && byProperty.label == "l")
        #expect(byField.label == "other" && byField.account == "a")
        #expect(merged.comment == "c" && merged.account == "a")
        #expect(throughItem.attributes.service == "t" && throughItem.attributes.account == "a")
        #expect(original == Attributes(service: "s", account: "a", label: "l", generic: Data([1, 2])))
    }

    @Test("equal attributes built apart are equal and hash alike; a difference in any one field tells them apart")
    func equalityCoversEveryField() {
        var built = Attributes(service: "s", account: "a")
        built.creationDate = Date(timeIntervalSince1970: 1)
        var again = Attributes(service: "s")
        again.account = "a"
        again.creationDate = Date(timeIntervalSince1970: 1)
        #expect(built == again)
        #expect(Set([built, again]).count == 1)

        for field in AttributeField.allCases {
            var changed = built
            field.copy(from: Self.sample, to: &changed)
            #expect(changed != built, "a change of \(field) went unnoticed")
            #expect(built.account == "a" && built.service == "s", "a change of \(field) reached the original")
        }
    }

    @Test("copies handed to other threads and changed there leave each other alone")
    func copiesAcrossThreads() async {
        let shared = Attributes(service: "s", account: "a")
        let accounts = await withTaskGroup(of: String?.self) { group in
            for index in 0..<32 {
                group.addTask {
                    var mine = shared
                    mine.account = "a\(index)"
                    return mine.account
                }
            }
            var accounts: Set<String?> = []
            for await account in group { accounts.insert(account) }
            return accounts
        }
        #expect(accounts.count == 32)
        #expect(shared.account == "a")
    }

    @Test("printed, attributes show their fields, as a plain struct of them did")
    func printedAsFields() {
        let printed = String(describing: Attributes(service: "s", account: "a"))
        #expect(printed.hasPrefix("Attributes(service: Optional(\"s\"), account: Optional(\"a\")"))
        #expect(!printed.contains("storage"))
    }

    /// A value for every field, each different from what the tests above build.
    private static let sample: Attributes = {
        var sample = Attributes(
            service: "other service", account: "other account", accessGroup: "group", synchronizable: true, server: "host",
            protocol: InternetProtocol(rawValue: "ftp"), authenticationType: AuthenticationType(rawValue: "dflt"), port: 21, path: "/p",
            securityDomain: "realm", accessibility: .afterFirstUnlock, label: "label", comment: "comment", description: "kind",
            generic: Data([9]), creator: 7, type: 8, isInvisible: true, isNegative: true, accessControl: .userPresence)
        sample.accountIsData = true
        sample.creationDate = Date(timeIntervalSince1970: 2)
        sample.modificationDate = Date(timeIntervalSince1970: 3)
        return sample
    }()
}
