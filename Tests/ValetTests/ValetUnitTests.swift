import Foundation
import Testing

@testable import Valet

@Suite("Valet's types: identity, equality, service strings, descriptions")
struct ValetUnitTests {
    let fixture = try! Fixture()

    @Test("equal configurations return the identical instance; any difference gives another Valet")
    func identityAndEquality() {
        #expect(fixture.valet() === fixture.valet())
        #expect(fixture.valet() == fixture.valet())
        #expect(fixture.cloud() === fixture.cloud())
        #expect(fixture.shared() === fixture.shared())
        #expect(fixture.valet() != fixture.valet("Other"))
        #expect(fixture.valet() != fixture.valet("Druidia", .afterFirstUnlock))
        #expect(fixture.valet() != fixture.cloud())
        #expect(!(fixture.valet() === fixture.cloud()))
        #expect(fixture.valet() != fixture.shared())
        let explicit = fixture.make { Valet.valet(withExplicitlySet: druidia, accessibility: .whenUnlocked) }
        #expect(explicit === fixture.make { Valet.valet(withExplicitlySet: druidia, accessibility: .whenUnlocked) })
        let explicitAFU = fixture.make { Valet.valet(withExplicitlySet: druidia, accessibility: .afterFirstUnlock) }
        #expect(explicit == explicitAFU && !(explicit === explicitAFU), "explicit valets differing in accessibility are == but distinct, as in Valet")
    }

    @Test("the service string of every flavour is built byte for byte as Valet builds it")
    func serviceStrings() {
        #expect(fixture.valet().service.description == "VAL_VALValet_initWithIdentifier:accessibility:_Druidia_AccessibleWhenUnlocked")
        #expect(
            fixture.cloud("Druidia", .afterFirstUnlock).service.description == "VAL_VALSynchronizableValet_initWithIdentifier:accessibility:_Druidia_AccessibleAfterFirstUnlock")
        #expect(fixture.shared(identifier: "valet1").service.description == "VAL_VALValet_initWithSharedAccessGroupIdentifier:accessibility:_Druidia_valet1_AccessibleWhenUnlocked")
        #expect(fixture.shared().service.description == "VAL_VALValet_initWithSharedAccessGroupIdentifier:accessibility:_Druidia_AccessibleWhenUnlocked")
        let cloudShared = fixture.make { Valet.iCloudSharedGroupValet(with: SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")!, accessibility: .whenUnlocked) }
        #expect(cloudShared.service.description == "VAL_VALSynchronizableValet_initWithSharedAccessGroupIdentifier:accessibility:_Druidia_AccessibleWhenUnlocked")
        #expect(fixture.make { Valet.valet(withExplicitlySet: druidia, accessibility: .whenUnlocked) }.service.description == "Druidia")
        let group = SharedGroupIdentifier(appIDPrefix: "AppID12345", nonEmptyGroup: "Druidia")!
        #expect(fixture.make { Valet.sharedGroupValet(withExplicitlySet: group, accessibility: .whenUnlocked) }.service.description == "Druidia")
        for accessibility in Accessibility.allCases {
            #expect(fixture.valet("Druidia", accessibility).service.description == "VAL_VALValet_initWithIdentifier:accessibility:_Druidia_\(accessibility)")
        }
    }

    @Test("identifier, accessibility and description are Valet's")
    func properties() {
        let valet = fixture.valet("Druidia", .afterFirstUnlock)
        #expect(valet.identifier.description == "Druidia")
        #expect(valet.accessibility == .afterFirstUnlock)
        #expect(valet.description.hasSuffix(" Druidia AccessibleAfterFirstUnlock (Valet)"))
        #expect(fixture.cloud().description.hasSuffix(" Druidia AccessibleWhenUnlocked (iCloud)"))
        #expect(fixture.cloud("Druidia", .afterFirstUnlock).accessibility == .afterFirstUnlock)
        #expect(fixture.shared().identifier.description == "AppID12345.Druidia")
    }

    @Test("identifiers refuse empty strings; group prefixes follow Valet's rules")
    func identifierValidation() {
        #expect(Identifier(nonEmpty: "") == nil && Identifier(nonEmpty: nil) == nil)
        #expect(Identifier(nonEmpty: "x")?.description == "x")
        #expect(SharedGroupIdentifier(appIDPrefix: "", nonEmptyGroup: "g") == nil)
        #expect(SharedGroupIdentifier(appIDPrefix: "A", nonEmptyGroup: "") == nil)
        #expect(SharedGroupIdentifier(appIDPrefix: "A", nonEmptyGroup: nil) == nil)
        #expect(SharedGroupIdentifier(appIDPrefix: "AppID12345", nonEmptyGroup: "Druidia")?.description == "AppID12345.Druidia")
        #expect(SharedGroupIdentifier(groupPrefix: "group", nonEmptyGroup: "Druidia")?.description == "group.Druidia")
        #expect(SharedGroupIdentifier(groupPrefix: "other", nonEmptyGroup: "Druidia") == nil)
    }

    @Test("accessibility values keep Valet's raw values, descriptions and keychain attributes")
    func accessibilityValues() {
        #expect(Accessibility.allCases.map(\.rawValue) == [1, 2, 4, 5, 6])
        #expect(Accessibility.allCases.map(\.secAccessibilityAttribute) == ["ak", "ck", "akpu", "aku", "cku"])
        #expect(Accessibility.whenPasscodeSetThisDeviceOnly.description == "AccessibleWhenPasscodeSetThisDeviceOnly")
        for cloud in CloudAccessibility.allCases {
            #expect(cloud.description == cloud.accessibility.description)
            #expect(cloud.secAccessibilityAttribute == cloud.accessibility.secAccessibilityAttribute)
        }
        #expect(SecureEnclaveAccessControl.biometricAny.description == "_AccessControlTouchIDAnyFingerprint")
        #expect(SecureEnclaveAccessControl.userPresence.description == "")
    }

    @Test("errors describe themselves as Type.case, with Valet's raw values")
    func errorDescriptions() {
        #expect(
            KeychainError.allCases.map(\.description) == [
                "KeychainError.couldNotAccessKeychain", "KeychainError.userCancelled", "KeychainError.itemNotFound",
                "KeychainError.missingEntitlement", "KeychainError.emptyKey", "KeychainError.emptyValue",
            ])
        #expect(KeychainError.allCases.map(\.rawValue) == Array(0...5))
        #expect(
            MigrationError.allCases.map(\.description) == [
                "MigrationError.invalidQuery", "MigrationError.keyToMigrateInvalid", "MigrationError.dataToMigrateInvalid",
                "MigrationError.duplicateKeyToMigrate", "MigrationError.keyToMigrateAlreadyExistsInValet", "MigrationError.removalFailed",
            ])
        #expect(MigratableKeyValuePair(key: "k", value: "v").value == Data("v".utf8))
    }
}
