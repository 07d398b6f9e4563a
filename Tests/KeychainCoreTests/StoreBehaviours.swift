import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The Keychain's item semantics, written once over `any Store` and run against every store
/// (StoreMatrix.swift).
enum StoreBehaviour: String, CaseIterable, Sendable {
    case everyAttributeRoundTrips, queryMatchesEveryNamedAttribute, valuesOnlyWhenAsked, duplicateAddFails
    case updateChangesOnlyWhatItNames, deleteRemovesMatches, batchIsAllOrNothing, valueSizeLimit
    case persistsAcrossReopen, persistsAcrossProcesses, nulInAttributesIsRefused, rollBackRestoresAMovedItem
    case visitingHandsOnWhatCopyMatchingLists

    func run(_ fixture: TestStore) throws {
        let store = fixture.store
        switch self {
        case .everyAttributeRoundTrips:
            for (itemClass, attributes) in [(ItemClass.genericPassword, Self.genericAttributes), (.internetPassword, Self.internetAttributes)] {
                let before = Date()
                try store.add(Item(itemClass, attributes: attributes, value: secret("s3cret")))
                let found = try #require(try store.copyMatching(Query(itemClass, attributes: attributes, limit: .one, returnData: true)).first)
                #expect(found.value?.string == "s3cret")
                var stored = found.attributes
                let created = try #require(stored.creationDate)
                #expect(created.timeIntervalSince(before) > -2 && stored.modificationDate != nil)
                stored.creationDate = nil
                stored.modificationDate = nil
                #expect(stored == attributes.normalizedIdentity(for: itemClass), "\(itemClass)")
            }

        case .queryMatchesEveryNamedAttribute:
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", label: "L1"), value: secret("1")))
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "b", label: "L2"), value: secret("2")))
            try store.add(Item(.genericPassword, attributes: Attributes(service: "t", account: "a", label: "L1"), value: secret("3")))
            try store.add(Item(.internetPassword, attributes: Attributes(account: "a", server: "s"), value: secret("4")))
            func names(_ query: Query) -> [String] {
                (try? store.copyMatching(query))?.map { "\($0.attributes.service ?? $0.attributes.server ?? "")/\($0.attributes.account ?? "")" }.sorted() ?? []
            }
            #expect(names(Query(.genericPassword, attributes: Attributes(service: "s"))) == ["s/a", "s/b"])
            #expect(names(Query(.genericPassword, attributes: Attributes(account: "a"))) == ["s/a", "t/a"])
            #expect(names(Query(.genericPassword, attributes: Attributes(label: "L1"))) == ["s/a", "t/a"])
            #expect(names(Query(.genericPassword, attributes: Attributes(service: "s", label: "L1"))) == ["s/a"])
            #expect(names(Query(.genericPassword, attributes: Attributes(service: "s", label: "nope"))) == [])
            #expect(names(Query(attributes: Attributes(account: "a"))) == ["s/a", "s/a", "t/a"])
            #expect(names(Query(.internetPassword)) == ["s/a"])
            #expect(names(Query(.genericPassword, attributes: Attributes(accessibility: .afterFirstUnlock))) == [])
            #expect(try store.copyMatching(Query(.genericPassword, limit: .one)).count == 1)
            #expect(throws: StoreError.itemNotFound) { try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "zzz"))) }
            #expect(try store.contains(Query(.genericPassword, attributes: Attributes(service: "t"))))
            #expect(try !store.contains(Query(.genericPassword, attributes: Attributes(service: "zzz"))))

        case .visitingHandsOnWhatCopyMatchingLists:
            for account in ["a", "b", "c"] {
                try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: account, label: "L-\(account)"), value: secret(account)))
            }
            try store.add(Item(.genericPassword, attributes: Attributes(service: "t", account: "x"), value: secret("x")))
            func visited(_ query: Query) throws(StoreError) -> [String] {
                var seen: [String] = []
                try store.forEachMatching(query) { (item: Item) throws(StoreError) in
                    seen.append("\(item.attributes.account ?? "")/\(item.attributes.label ?? "")/\(item.value?.string ?? "-")")
                }
                return seen.sorted()
            }
            func listed(_ query: Query) throws(StoreError) -> [String] {
                try store.copyMatching(query).map { "\($0.attributes.account ?? "")/\($0.attributes.label ?? "")/\($0.value?.string ?? "-")" }.sorted()
            }
            let scope = Query(.genericPassword, attributes: Attributes(service: "s"))
            #expect(try visited(scope) == ["a/L-a/-", "b/L-b/-", "c/L-c/-"])
            #expect(try visited(scope) == listed(scope))
            #expect(try store.accounts(matching: scope).sorted() == ["a", "b", "c"], "the accounts alone, as the faces' allKeys list them")
            var withValues = scope
            withValues.returnData = true
            #expect(try visited(withValues) == ["a/L-a/a", "b/L-b/b", "c/L-c/c"])
            #expect(try visited(Query(.genericPassword, attributes: Attributes(service: "s", label: "L-b"))) == ["b/L-b/-"])
            #expect(throws: StoreError.itemNotFound) { try visited(Query(.genericPassword, attributes: Attributes(service: "zzz"))) }
            // What the body throws stops the listing and comes back as it was thrown.
            var calls = 0
            #expect(throws: StoreError.userCancelled) {
                try store.forEachMatching(scope) { (_: Item) throws(StoreError) in
                    calls += 1
                    throw .userCancelled
                }
            }
            #expect(calls == 1)
            #expect(try visited(scope).count == 3, "the store still answers after a body threw")

        case .valuesOnlyWhenAsked:
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
            #expect(try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))).first?.value == nil)
            #expect(try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)).first?.value?.string == "v")

        case .duplicateAddFails:
            let attributes = Attributes(service: "s", account: "a")
            try store.add(Item(.genericPassword, attributes: attributes, value: secret("first")))
            #expect(throws: StoreError.duplicateItem) {
                try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessibility: .afterFirstUnlock, label: "x"), value: secret("second")))
            }
            #expect(try store.copyMatching(Query(.genericPassword, attributes: attributes, returnData: true)).first?.value?.string == "first")
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessGroup: "g"), value: secret("g")))
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", synchronizable: true), value: secret("sync")))

        case .updateChangesOnlyWhatItNames:
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", label: "keep", comment: "old"), value: secret("v1")))
            let before = try #require(try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"))).first)
            try store.update(Query(.genericPassword, attributes: Attributes(service: "s", account: "a")), attributes: Attributes(comment: "new"), value: nil)
            let after = try #require(try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)).first)
            #expect(after.attributes.comment == "new" && after.attributes.label == "keep" && after.value?.string == "v1")
            #expect(after.attributes.creationDate == before.attributes.creationDate)
            #expect(after.attributes.modificationDate! >= before.attributes.modificationDate!)
            try store.update(Query(.genericPassword, attributes: Attributes(service: "s")), attributes: Attributes(accessibility: .afterFirstUnlock), value: secret("v2"))
            let moved = try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s", accessibility: .afterFirstUnlock), returnData: true))
            #expect(moved.first?.value?.string == "v2")
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "b"), value: secret("b")))
            #expect(throws: StoreError.duplicateItem) {
                try store.update(Query(.genericPassword, attributes: Attributes(service: "s", account: "b")), attributes: Attributes(account: "a"), value: nil)
            }
            #expect(throws: StoreError.itemNotFound) {
                try store.update(Query(.genericPassword, attributes: Attributes(service: "none")), attributes: Attributes(label: "x"), value: nil)
            }

        case .deleteRemovesMatches:
            for account in ["a", "b", "c"] {
                try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: account), value: secret(account)))
            }
            #expect(try store.delete(Query(.genericPassword, attributes: Attributes(service: "s", account: "b"))) == 1)
            #expect(try store.delete(Query(.genericPassword, attributes: Attributes(service: "s", account: "b"))) == 0)
            #expect(try store.delete(Query(.genericPassword, attributes: Attributes(service: "s"))) == 2)
            #expect(throws: StoreError.itemNotFound) { try store.copyMatching(Query(.genericPassword)) }

        case .batchIsAllOrNothing:
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "exists"), value: secret("x")))
            #expect(throws: StoreError.duplicateItem) {
                try store.write([
                    .add(Item(.genericPassword, attributes: Attributes(service: "s", account: "new1"), value: secret("1"))),
                    .delete(Query(.genericPassword, attributes: Attributes(service: "s", account: "exists"))),
                    .add(Item(.genericPassword, attributes: Attributes(service: "s", account: "new2"), value: secret("2"))),
                    .add(Item(.genericPassword, attributes: Attributes(service: "s", account: "new2"), value: secret("dup"))),
                ])
            }
            let items = try store.copyMatching(Query(.genericPassword, returnData: true))
            #expect(items.compactMap(\.attributes.account) == ["exists"])
            #expect(items.first?.value?.string == "x")

        case .nulInAttributesIsRefused:
            // "admin\0x" must not become "admin" (C strings end at NUL) and name another item.
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "admin"), value: secret("real")))
            let sneaky = Attributes(service: "s", account: "admin\0x")
            #expect(throws: StoreError.invalidArgument("the account contains a NUL character")) {
                try store.add(Item(.genericPassword, attributes: sneaky, value: secret("planted")))
            }
            #expect(throws: StoreError.invalidArgument("the account contains a NUL character")) {
                try store.copyMatching(Query(.genericPassword, attributes: sneaky, returnData: true))
            }
            #expect(throws: StoreError.invalidArgument("the account contains a NUL character")) { try store.contains(Query(.genericPassword, attributes: sneaky)) }
            #expect(throws: StoreError.invalidArgument("the account contains a NUL character")) { try store.delete(Query(.genericPassword, attributes: sneaky)) }
            #expect(throws: StoreError.invalidArgument("the label contains a NUL character")) {
                try store.update(Query(.genericPassword, attributes: Attributes(service: "s", account: "admin")), attributes: Attributes(label: "a\0b"), value: nil)
            }
            #expect(throws: StoreError.invalidArgument("the service contains a NUL character")) {
                try store.upsert(Item(.genericPassword, attributes: Attributes(service: "s\0", account: "admin"), value: secret("x")))
            }
            let items = try store.copyMatching(Query(.genericPassword, returnData: true))
            #expect(items.count == 1 && items.first?.value?.string == "real")

        case .rollBackRestoresAMovedItem:
            // A batch that moves A to B, then fails: A is back as it was, and there is no B.
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "A", label: "first"), value: secret("a")))
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "C"), value: secret("c")))
            #expect(throws: StoreError.duplicateItem) {
                try store.write([
                    .update(Query(.genericPassword, attributes: Attributes(service: "s", account: "A")), attributes: Attributes(account: "B", label: "moved"), value: secret("b")),
                    .add(Item(.genericPassword, attributes: Attributes(service: "s", account: "C"), value: secret("dup"))),
                ])
            }
            let items = try store.copyMatching(Query(.genericPassword, returnData: true))
            #expect(items.compactMap(\.attributes.account).sorted() == ["A", "C"])
            let a = items.first { $0.attributes.account == "A" }
            #expect(a?.value?.string == "a" && a?.attributes.label == "first")

        case .valueSizeLimit:
            let limit = 1 << 20
            let big = SecretBytes([UInt8](repeating: 7, count: limit))
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "big"), value: big))
            #expect(try store.copyMatching(Query(.genericPassword, attributes: Attributes(account: "big"), returnData: true)).first?.value == big)
            #expect(throws: StoreError.valueTooLarge(limit: limit)) {
                try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "bigger"), value: SecretBytes([UInt8](repeating: 7, count: limit + 1))))
            }

        case .persistsAcrossReopen:
            try store.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: SecretBytes([0, 0xFF, 0x10, 0x80])))
            let reopened = try fixture.reopened()
            #expect(try reopened.copyMatching(Query(.genericPassword, attributes: Attributes(service: "s"), returnData: true)).first?.value == SecretBytes([0, 0xFF, 0x10, 0x80]))

        case .persistsAcrossProcesses:
            try store.add(Item(.genericPassword, attributes: Attributes(service: "svc", account: "from-library"), value: secret("L")))
            let read = try fixture.command(["get", "--service", "svc", "from-library"])
            #expect(read.status == 0 && read.output == "L\n", "\(read.stderr)")
            let written = try fixture.command(["set", "--service", "svc", "from-process"], input: Data("P".utf8))
            #expect(written.status == 0, "\(written.stderr)")
            #expect(try store.copyMatching(Query(.genericPassword, attributes: Attributes(account: "from-process"), returnData: true)).first?.value?.string == "P")
        }
    }

    static let genericAttributes = Attributes(
        service: "svc", account: "acct", accessGroup: "group.x", synchronizable: false,
        accessibility: .afterFirstUnlock, label: "A label", comment: "A comment", description: "A description",
        generic: Data([0, 1, 2, 255]), creator: 0x6162_6364, type: 0x7778_797A, isInvisible: true, isNegative: false)

    static let internetAttributes = Attributes(
        account: "alice", accessGroup: "", synchronizable: true, server: "example.com", protocol: .https,
        authenticationType: .htmlForm, port: 8443, path: "/login", securityDomain: "realm",
        accessibility: .whenUnlocked, label: "site", comment: "c", description: "d", generic: Data("g".utf8),
        creator: 1, type: 2, isInvisible: false, isNegative: true)
}
