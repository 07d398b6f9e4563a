import Foundation
import KeychainTestSupport
import Testing

import enum KeychainCore.PresenceAuthentication
import class KeychainCore.SecretServiceStore

@testable import Valet

/// What Valet's own suite and code written for Valet 2 and 5 expect, on every store.
enum CompatibilityBehaviour: String, CaseIterable, Sendable {
    case valet2ReadsValet5Items, valet2ReturnsBoolAndNil, valet2SynchronizableIsTheICloudFlavour, valet2SharedGroup, valet2Migration
    case equalValetsAreEqualObjects, booleanConstantsInMigrationQueries

    func run(_ fixture: Fixture) throws {
        switch self {
        case .valet2ReadsValet5Items:
            let legacy = try #require(fixture.make { VALValet(identifier: "Druidia", accessibility: .whenUnlocked) })
            let modern = fixture.valet("Druidia", .whenUnlocked)
            #expect(legacy.setString("12345", forKey: "Skroob"))
            #expect(try modern.string(forKey: "Skroob") == "12345", "Valet 5 reads what Valet 2 wrote")
            try modern.setString("67890", forKey: "Helmet")
            #expect(legacy.string(forKey: "Helmet") == "67890", "and the reverse")
            #expect(legacy.allKeys() == Set(["Skroob", "Helmet"] as [AnyHashable]))
            let other = try #require(fixture.make { VALValet(identifier: "Druidia", accessibility: .afterFirstUnlock) })
            #expect(other.string(forKey: "Skroob") == nil, "another accessibility is another sandbox")

        case .valet2ReturnsBoolAndNil:
            let valet = try #require(fixture.make { VALValet(identifier: "Druidia", accessibility: .whenUnlocked) })
            #expect(fixture.make { VALValet(identifier: "", accessibility: .whenUnlocked) } == nil, "an empty identifier gives nil")
            #expect(fixture.make { VALValet(identifier: "Druidia", accessibility: .always) } == nil, "the retired 'always' gives nil")
            #expect(valet.string(forKey: "missing") == nil && valet.object(forKey: "missing") == nil)
            #expect(!valet.setString("", forKey: "empty") && !valet.setString("x", forKey: ""))
            #expect(valet.setObject(Data([1, 2]), forKey: "bytes") && valet.object(forKey: "bytes") == Data([1, 2]))
            #expect(valet.containsObject(forKey: "bytes") && valet.removeObject(forKey: "bytes") && !valet.containsObject(forKey: "bytes"))
            #expect(valet.setString("a", forKey: "a") && valet.removeAllObjects() && valet.allKeys().isEmpty)
            #expect(valet.canAccessKeychain())
            #expect(valet.isEqual(to: fixture.make { VALValet(identifier: "Druidia", accessibility: .whenUnlocked) }!))
            #expect(valet.identifier == "Druidia" && !valet.isSharedAcrossApplications && valet.accessibility == .whenUnlocked)

        case .valet2SynchronizableIsTheICloudFlavour:
            let legacy = try #require(fixture.make { VALSynchronizableValet(identifier: "Druidia", accessibility: .afterFirstUnlock) })
            #expect(legacy.setString("cloud", forKey: "k"))
            #expect(try fixture.cloud("Druidia", .afterFirstUnlock).string(forKey: "k") == "cloud")
            #expect(try fixture.valet("Druidia", .afterFirstUnlock).allKeys().isEmpty, "kept apart from local items")
            #expect(fixture.make { VALSynchronizableValet(identifier: "Druidia", accessibility: .whenUnlockedThisDeviceOnly) } == nil)
            #expect(VALSynchronizableValet.supportsSynchronizableKeychainItems())

        case .valet2SharedGroup:
            let legacy = try #require(fixture.make { VALValet(sharedAccessGroupIdentifier: "Druidia", accessibility: .whenUnlocked) })
            #expect(legacy.isSharedAcrossApplications)
            #expect(legacy.setString("shared", forKey: "k"))
            let modern = fixture.make { Valet.sharedGroupValet(with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, accessibility: .whenUnlocked) }
            #expect(try modern.string(forKey: "k") == "shared")

        case .valet2Migration:
            let source = try #require(fixture.make { VALValet(identifier: "Source", accessibility: .whenUnlocked) })
            let destination = try #require(fixture.make { VALValet(identifier: "Destination", accessibility: .whenUnlocked) })
            #expect(source.setString("moved", forKey: "k"))
            #expect(destination.migrateObjects(from: source, removeOnCompletion: true) == nil)
            #expect(destination.string(forKey: "k") == "moved" && source.string(forKey: "k") == nil)
            let empty = destination.migrateObjects(from: source, removeOnCompletion: false) as NSError?
            #expect(empty?.domain == VALMigrationErrorDomain && empty?.code == Int(VALMigrationError.noItemsToMigrateFound.rawValue))
            let invalid = destination.migrateObjects(matchingQuery: [:], removeOnCompletion: false) as NSError?
            #expect(invalid?.code == Int(VALMigrationError.invalidQuery.rawValue))

        case .equalValetsAreEqualObjects:
            let first = fixture.valet("Equality")
            let again = fixture.valet("Equality")
            #expect(first === again && first.isEqual(again) && first.hash == again.hash)
            #expect(Set([first, again]).count == 1)
            #expect(!first.isEqual(fixture.valet("Other")))

        case .booleanConstantsInMigrationQueries:
            try fixture.cloud("Legacy").setString("synced", forKey: "k")
            let query: [String: AnyHashable] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrSynchronizable as String: kCFBooleanTrue,
                kSecAttrService as String: fixture.cloud("Legacy").service.description,
            ]
            try fixture.valet("Target").migrateObjects(matching: query, removeOnCompletion: false)
            #expect(try fixture.valet("Target").string(forKey: "k") == "synced")
            let local: [String: AnyHashable] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrSynchronizable as String: kCFBooleanFalse,
                kSecAttrService as String: fixture.cloud("Legacy").service.description,
            ]
            #expect(throws: KeychainError.itemNotFound) { try fixture.valet("Target2").migrateObjects(matching: local, removeOnCompletion: false) }
        }
    }
}

@Suite("Valet 2 and 5 compatibility on the vault")
struct CompatibilityOnVault {
    @Test(arguments: CompatibilityBehaviour.allCases)
    func behaviour(_ behaviour: CompatibilityBehaviour) throws { try behaviour.run(Fixture(.vault)) }

    @Test("a Valet made before the default store opens and one made after are one object (a child process with only the default store)")
    func identityAcrossFirstUse() throws {
        let directory = TemporaryDirectory()
        let result = try Subprocess.run(
            KeychainExecutable.reliabilityPath, ["worker", "valet-identity"],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_DATA_HOME": directory.path + "/data",
                "KEYCHAIN_KERNEL_KEYRING": "off",
            ])
        #expect(result.status == 0 && result.output == "identical equal hashed set=1\n", "\(result.output) \(result.stderr)")
    }

    @Test("the Secure Enclave valets also read without a prompt argument (Valet's branch without LocalAuthentication), and Valet 2's SE valets share their items")
    func secureEnclaveReadsWithoutPrompt() throws {
        let fixture = try Fixture(.vault, passphrase: ValetBehaviour.passphrase)
        let authenticator = ScriptedAuthenticator()
        try PresenceAuthentication.withAuthenticator(authenticator) {
            let enclave = fixture.make { SecureEnclaveValet.valet(with: druidia, accessControl: .userPresence) }
            try enclave.setString("12345", forKey: "combination")
            authenticator.script(.passphrase(ValetBehaviour.passphrase), .passphrase(ValetBehaviour.passphrase), .passphrase(ValetBehaviour.passphrase))
            #expect(try enclave.string(forKey: "combination") == "12345")
            #expect(try enclave.object(forKey: "combination") == Data("12345".utf8))
            let single = fixture.make { SinglePromptSecureEnclaveValet.valet(with: druidia, accessControl: .userPresence) }
            #expect(try single.allKeys().isEmpty)
            let legacy = try #require(fixture.make { VALSecureEnclaveValet(identifier: "Druidia", accessControl: .userPresence) })
            #expect(legacy.accessControl == .userPresence)
            #expect(legacy.string(forKey: "combination", userPrompt: "Open") == "12345", "Valet 2's SE valet reads Valet 5's item")
            authenticator.script(.cancel)
            var cancelled: ObjCBool = false
            #expect(legacy.string(forKey: "combination", userPrompt: "Open", userCancelled: &cancelled) == nil && cancelled.boolValue)
        }
    }
}

@Suite(
    "Valet 2 and 5 compatibility on the Secret Service",
    .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
struct CompatibilityOnSecretService {
    @Test(arguments: CompatibilityBehaviour.allCases)
    func behaviour(_ behaviour: CompatibilityBehaviour) throws { try behaviour.run(Fixture(.secretService)) }
}
