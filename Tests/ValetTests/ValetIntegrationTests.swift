import Foundation
import Testing
import Valet
import KeychainTestSupport

@Suite("Valet on the vault: Valet's integration suite, ported")
struct ValetIntegrationTests {
    let fixture: Fixture
    init() throws { fixture = try Fixture(passphrase: "valet-tests") }

    @Test("canAccessKeychain is true for every accessibility and flavour on an unlocked vault")
    func canAccessEveryAccessibility() {
        for valet in fixture.permutations() {
            #expect(valet.canAccessKeychain(), "\(valet)")
        }
        let appGroup = fixture.make { Valet.sharedGroupValet(with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, accessibility: .whenUnlocked) }
        #expect(appGroup.canAccessKeychain())
    }

    @Test("whenPasscodeSetThisDeviceOnly cannot be used in a vault without a passphrase; the others can")
    func passcodeClassNeedsPassphrase() throws {
        let plain = try Fixture()
        #expect(!plain.valet("Druidia", .whenPasscodeSetThisDeviceOnly).canAccessKeychain())
        #expect(throws: KeychainError.couldNotAccessKeychain) { try plain.valet("Druidia", .whenPasscodeSetThisDeviceOnly).setString("x", forKey: "k") }
        for accessibility in Accessibility.allCases where accessibility != .whenPasscodeSetThisDeviceOnly {
            #expect(plain.valet("Druidia", accessibility).canAccessKeychain())
        }
    }

    @Test("containsObject: false, then true after a set, then false after a remove")
    func contains() throws {
        let valet = fixture.valet()
        #expect(try !valet.containsObject(forKey: "Skroob"))
        try valet.setString("12345", forKey: "Skroob")
        #expect(try valet.containsObject(forKey: "Skroob"))
        try valet.removeObject(forKey: "Skroob")
        #expect(try !valet.containsObject(forKey: "Skroob"))
        #expect(throws: KeychainError.couldNotAccessKeychain) { try valet.containsObject(forKey: "") }
    }

    @Test("allKeys lists what was set, hides the canary, and is empty for other sandboxes")
    func allKeys() throws {
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
    }

    @Test("string and object round-trip; an absent key is itemNotFound; equal Valets share data")
    func roundTrips() throws {
        let valet = fixture.valet()
        #expect(throws: KeychainError.itemNotFound) { try valet.string(forKey: "Skroob") }
        #expect(throws: KeychainError.itemNotFound) { try valet.object(forKey: "Skroob") }
        try valet.setString("12345", forKey: "Skroob")
        #expect(try valet.string(forKey: "Skroob") == "12345")
        let bytes = Data([0, 1, 2, 0xFE, 0xFF])
        try valet.setObject(bytes, forKey: "blob")
        #expect(try valet.object(forKey: "blob") == bytes)
        #expect(try fixture.valet().string(forKey: "Skroob") == "12345")
    }

    @Test("a value is invisible from every other sandbox: identifier, accessibility, flavour, group")
    func isolationMatrix() throws {
        let valet = fixture.valet()
        try valet.setString("12345", forKey: "Skroob")
        let sharedA = fixture.shared(identifier: "valet1")
        try sharedA.setString("shared", forKey: "Skroob")
        let cloudA = fixture.make { Valet.iCloudSharedGroupValet(with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, identifier: Identifier(nonEmpty: "valet1"), accessibility: .whenUnlocked) }
        try cloudA.setString("cloud", forKey: "Skroob")
        let others: [Valet] = [
            fixture.valet("Other"),
            fixture.valet("Druidia", .afterFirstUnlock),
            fixture.valet("Druidia", .whenUnlockedThisDeviceOnly),
            fixture.cloud(),
            fixture.shared(),
            fixture.shared(identifier: "valet2"),
            fixture.shared(prefix: "OtherPrefix", identifier: "valet1"),
            fixture.make { Valet.iCloudSharedGroupValet(with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, identifier: Identifier(nonEmpty: "valet2"), accessibility: .whenUnlocked) },
        ]
        for other in others {
            #expect(throws: KeychainError.itemNotFound, "\(other)") { try other.string(forKey: "Skroob") }
        }
        #expect(try sharedA.string(forKey: "Skroob") == "shared")
        #expect(try cloudA.string(forKey: "Skroob") == "cloud")
        #expect(try valet.string(forKey: "Skroob") == "12345")
    }

    @Test("explicitly set plain and iCloud Valets with one identifier still do not see each other")
    func explicitPlainAndCloudIsolated() throws {
        let plain = fixture.make { Valet.valet(withExplicitlySet: druidia, accessibility: .whenUnlocked) }
        let cloud = fixture.make { Valet.iCloudValet(withExplicitlySet: druidia, accessibility: .whenUnlocked) }
        try plain.setString("plain", forKey: "k")
        #expect(throws: KeychainError.itemNotFound) { try cloud.string(forKey: "k") }
        try cloud.setString("cloud", forKey: "k")
        #expect(try plain.string(forKey: "k") == "plain")
        try cloud.removeObject(forKey: "k")
        #expect(try plain.string(forKey: "k") == "plain")
    }

    @Test("setting overwrites; empty values and keys are refused with their own errors")
    func overwriteAndEmptyInputs() throws {
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
    }

    @Test("UTF-8 data reads as a string, a string as its UTF-8 bytes, and other bytes as itemNotFound")
    func stringDataConversion() throws {
        let valet = fixture.valet()
        try valet.setObject(Data("Skroob 🔑".utf8), forKey: "utf8")
        #expect(try valet.string(forKey: "utf8") == "Skroob 🔑")
        try valet.setString("12345", forKey: "s")
        #expect(try valet.object(forKey: "s") == Data("12345".utf8))
        try valet.setObject(Data([0xFF, 0xFE, 0x00, 0xC3]), forKey: "binary")
        #expect(throws: KeychainError.itemNotFound) { try valet.string(forKey: "binary") }
    }

    @Test("removing an absent key succeeds; removal touches only its own sandbox")
    func removalIsolation() throws {
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
    }

    @Test("a locked vault refuses whenUnlocked reads as couldNotAccessKeychain, not as a missing item")
    func lockedVault() throws {
        let valet = fixture.valet()
        try valet.setString("12345", forKey: "Skroob")
        fixture.vault.lock()
        #expect(throws: KeychainError.couldNotAccessKeychain) { try valet.string(forKey: "Skroob") }
        #expect(!valet.canAccessKeychain())
        try fixture.vault.unlock(passphrase: secret("valet-tests"))
        #expect(try valet.string(forKey: "Skroob") == "12345")
    }

    @Test("50 concurrent sets and 50 concurrent removes on two queues raise no error")
    func concurrentSetsAndRemoves() async throws {
        let valet = fixture.valet()
        let errors = Errors()
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
    }

    @Test("a value written on one thread is read on another; a Valet made on a background queue works elsewhere")
    func crossThread() throws {
        let valet = fixture.valet()
        let written = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? valet.setString("from background", forKey: "k")
            written.signal()
        }
        written.wait()
        #expect(try valet.string(forKey: "k") == "from background")
        let fixture = self.fixture
        let made = ValetBox()
        let vault = fixture.vault
        DispatchQueue.global().sync {
            made.valet = ValetStore.withStore(vault) { Valet.valet(with: Identifier(nonEmpty: "Background")!, accessibility: .whenUnlocked) }
        }
        try made.valet!.setString("ok", forKey: "k")
        #expect(try fixture.valet("Background").string(forKey: "k") == "ok")
    }

    @Test("several processes writing through one vault lose nothing, and Valet reads what they wrote")
    func multiProcess() async throws {
        let path = fixture.vault.location.path
        let home = fixture.directory.path
        let passphraseFile = fixture.directory.file("pw", "valet-tests")
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try KeychainExecutable.run(["set", "--vault", path, "--identifier", "Druidia", "key\(index)"],
                                               input: Data("value\(index)".utf8), environment: ["KEYCHAIN_PASSPHRASE_FILE": passphraseFile], home: home)
                }
            }
            var all: [CommandResult] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        let valet = fixture.valet()
        #expect(try valet.allKeys() == Set((0..<8).map { "key\($0)" }))
        for index in 0..<8 { #expect(try valet.string(forKey: "key\(index)") == "value\(index)") }
    }
}

final class Errors: @unchecked Sendable {
    private var errors: [Error] = []
    private let lock = NSLock()
    func add(_ error: Error) { lock.lock(); errors.append(error); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return errors.count }
}

final class ValetBox: @unchecked Sendable { var valet: Valet? }
