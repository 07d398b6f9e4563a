import Foundation
import KeychainTestSupport
import Testing
import Valet

/// Valet's integration suite, written once over any store (ValetStoreMatrix.swift runs it on each).
enum ValetBehaviour: String, CaseIterable, Sendable {
    case canAccessEveryAccessibility, contains, allKeys, roundTrips, isolationMatrix, explicitPlainAndCloudIsolated
    case overwriteAndEmptyInputs, stringDataConversion, removalIsolation, concurrentSetsAndRemoves, crossThread, multiProcess

    /// The vault's passphrase in these tests (the vault runs them unlocked, to reach every class).
    static let passphrase = "valet-tests"

    func run(_ fixture: Fixture) throws {
        switch self {
        case .canAccessEveryAccessibility:
            for valet in fixture.permutations() {
                #expect(valet.canAccessKeychain(), "\(valet)")
            }
            let appGroup = fixture.make { Valet.sharedGroupValet(with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, accessibility: .whenUnlocked) }
            #expect(appGroup.canAccessKeychain())

        case .contains:
            let valet = fixture.valet()
            #expect(try !valet.containsObject(forKey: "Skroob"))
            try valet.setString("12345", forKey: "Skroob")
            #expect(try valet.containsObject(forKey: "Skroob"))
            try valet.removeObject(forKey: "Skroob")
            #expect(try !valet.containsObject(forKey: "Skroob"))
            #expect(throws: KeychainError.couldNotAccessKeychain) { try valet.containsObject(forKey: "") }

        case .allKeys:
            let valet = fixture.valet()
            #expect(try valet.allKeys() == [])
            #expect(valet.canAccessKeychain())
            #expect(try valet.allKeys() == [], "the canary is hidden")
            try valet.setString("12345", forKey: "Skroob")
            #expect(try valet.allKeys() == ["Skroob"])
            try valet.setString("chocolate chip", forKey: "cookie")
            #expect(try valet.allKeys() == ["Skroob", "cookie"])
            for other in [fixture.valet("Other"), fixture.valet("Druidia", .afterFirstUnlock), fixture.cloud(), fixture.shared()] {
                #expect(try other.allKeys() == [], "\(other)")
            }
            try valet.removeAllObjects()
            #expect(try valet.allKeys() == [])

        case .roundTrips:
            let valet = fixture.valet()
            #expect(throws: KeychainError.itemNotFound) { try valet.string(forKey: "Skroob") }
            #expect(throws: KeychainError.itemNotFound) { try valet.object(forKey: "Skroob") }
            try valet.setString("12345", forKey: "Skroob")
            #expect(try valet.string(forKey: "Skroob") == "12345")
            let bytes = Data([0, 1, 2, 0xFE, 0xFF])
            try valet.setObject(bytes, forKey: "blob")
            #expect(try valet.object(forKey: "blob") == bytes)
            #expect(try fixture.valet().string(forKey: "Skroob") == "12345")

        case .isolationMatrix:
            let valet = fixture.valet()
            try valet.setString("12345", forKey: "Skroob")
            let sharedA = fixture.shared(identifier: "valet1")
            try sharedA.setString("shared", forKey: "Skroob")
            let cloudA = fixture.make {
                Valet.iCloudSharedGroupValet(
                    with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, identifier: Identifier(nonEmpty: "valet1"), accessibility: .whenUnlocked)
            }
            try cloudA.setString("cloud", forKey: "Skroob")
            let others: [Valet] = [
                fixture.valet("Other"),
                fixture.valet("Druidia", .afterFirstUnlock),
                fixture.valet("Druidia", .whenUnlockedThisDeviceOnly),
                fixture.cloud(),
                fixture.shared(),
                fixture.shared(identifier: "valet2"),
                fixture.shared(prefix: "OtherPrefix", identifier: "valet1"),
                fixture.make {
                    Valet.iCloudSharedGroupValet(
                        with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, identifier: Identifier(nonEmpty: "valet2"), accessibility: .whenUnlocked)
                },
            ]
            for other in others {
                #expect(throws: KeychainError.itemNotFound, "\(other)") { try other.string(forKey: "Skroob") }
            }
            #expect(try sharedA.string(forKey: "Skroob") == "shared")
            #expect(try cloudA.string(forKey: "Skroob") == "cloud")
            #expect(try valet.string(forKey: "Skroob") == "12345")

        case .explicitPlainAndCloudIsolated:
            let plain = fixture.make { Valet.valet(withExplicitlySet: druidia, accessibility: .whenUnlocked) }
            let cloud = fixture.make { Valet.iCloudValet(withExplicitlySet: druidia, accessibility: .whenUnlocked) }
            try plain.setString("plain", forKey: "k")
            #expect(throws: KeychainError.itemNotFound) { try cloud.string(forKey: "k") }
            try cloud.setString("cloud", forKey: "k")
            #expect(try plain.string(forKey: "k") == "plain")
            try cloud.removeObject(forKey: "k")
            #expect(try plain.string(forKey: "k") == "plain")

        case .overwriteAndEmptyInputs:
            let valet = fixture.valet()
            try valet.setString("first", forKey: "k")
            try valet.setString("second", forKey: "k")
            #expect(try valet.string(forKey: "k") == "second")
            #expect(throws: KeychainError.emptyValue) { try valet.setString("", forKey: "k") }
            #expect(throws: KeychainError.emptyValue) { try valet.setObject(Data(), forKey: "k") }
            #expect(throws: KeychainError.emptyKey) { try valet.setString("v", forKey: "") }
            #expect(throws: KeychainError.emptyKey) { try valet.string(forKey: "") }
            #expect(throws: KeychainError.emptyKey) { try valet.removeObject(forKey: "") }
            #expect(try valet.string(forKey: "k") == "second")

        case .stringDataConversion:
            let valet = fixture.valet()
            try valet.setObject(Data("Skroob 🔑".utf8), forKey: "utf8")
            #expect(try valet.string(forKey: "utf8") == "Skroob 🔑")
            try valet.setString("12345", forKey: "s")
            #expect(try valet.object(forKey: "s") == Data("12345".utf8))
            try valet.setObject(Data([0xFF, 0xFE, 0x00, 0xC3]), forKey: "binary")
            #expect(throws: KeychainError.itemNotFound) { try valet.string(forKey: "binary") }

        case .removalIsolation:
            let valet = fixture.valet()
            try valet.removeObject(forKey: "never-set")
            try valet.setString("v", forKey: "k")
            let neighbours = [fixture.valet("Other"), fixture.valet("Druidia", .afterFirstUnlock), fixture.cloud(), fixture.shared(identifier: "Druidia")]
            for neighbour in neighbours { try neighbour.setString("n", forKey: "k") }
            try valet.removeObject(forKey: "k")
            #expect(throws: KeychainError.itemNotFound) { try valet.string(forKey: "k") }
            for neighbour in neighbours { #expect(try neighbour.string(forKey: "k") == "n") }
            try valet.setString("v", forKey: "k")
            try valet.removeAllObjects()
            for neighbour in neighbours { #expect(try neighbour.string(forKey: "k") == "n") }

        case .concurrentSetsAndRemoves:
            let valet = fixture.valet()
            let errors = Collector<Error>()
            let group = DispatchGroup()
            let setQueue = DispatchQueue(label: "sets", attributes: .concurrent)
            let removeQueue = DispatchQueue(label: "removes", attributes: .concurrent)
            for index in 0..<50 {
                setQueue.async(group: group) {
                    do { try valet.setString("value\(index)", forKey: "key") } catch { errors.add(error) }
                }
                removeQueue.async(group: group) {
                    do { try valet.removeObject(forKey: "key") } catch { errors.add(error) }
                }
            }
            #expect(group.wait(timeout: .now() + 10) == .success)
            #expect(errors.count == 0)

        case .crossThread:
            let valet = fixture.valet()
            let written = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                try? valet.setString("from background", forKey: "k")
                written.signal()
            }
            written.wait()
            #expect(try valet.string(forKey: "k") == "from background")
            let made = ValetBox()
            let store = fixture.store
            DispatchQueue.global().sync {
                made.valet = ValetStore.withStore(store) { Valet.valet(with: Identifier(nonEmpty: "Background")!, accessibility: .whenUnlocked) }
            }
            try made.valet!.setString("ok", forKey: "k")
            #expect(try fixture.valet("Background").string(forKey: "k") == "ok")

        case .multiProcess:
            let passphraseFile = fixture.directory.file("pw", Self.passphrase)
            let results = Collector<CommandResult?>()
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                let result = try? fixture.testStore.command(
                    ["set", "--identifier", "Druidia", "key\(index)"], input: Data("value\(index)".utf8),
                    environment: ["KEYCHAIN_PASSPHRASE_FILE": passphraseFile])
                results.add(result)
            }
            #expect(results.all.count == 8 && results.all.allSatisfy { $0?.status == 0 }, "\(results.all.map { $0?.stderr ?? "did not run" })")
            let valet = fixture.valet()
            #expect(try valet.allKeys() == Set((0..<8).map { "key\($0)" }))
            for index in 0..<8 { #expect(try valet.string(forKey: "key\(index)") == "value\(index)") }
        }
    }
}

final class ValetBox: @unchecked Sendable { var valet: Valet? }
