import Foundation
import KeychainTestSupport
import Testing

import enum KeychainCore.PresenceAuthentication

@testable import Valet

/// Valet's Secure Enclave flavours: every read behind the proof of presence (the vault
/// passphrase), given here by a scripted authenticator.
@Suite("SecureEnclaveValet and SinglePromptSecureEnclaveValet on the vault")
struct SecureEnclaveTests {
    static let passphrase = ValetBehaviour.passphrase
    static let group = SharedGroupIdentifier(appIDPrefix: "AppID12345", nonEmptyGroup: "Druidia")!
    static let controls: [SecureEnclaveAccessControl] = [.userPresence, .devicePasscode, .biometricAny, .biometricCurrentSet]

    let fixture: Fixture
    let authenticator = ScriptedAuthenticator()

    init() throws { fixture = try Fixture(.vault, passphrase: Self.passphrase) }

    /// Runs `body` with Valets on this fixture's vault and the scripted authenticator.
    func scene<R>(_ body: () throws -> R) rethrows -> R {
        try PresenceAuthentication.withAuthenticator(authenticator) { try fixture.make(body) }
    }

    func enclave(_ identifier: Identifier = druidia, _ control: SecureEnclaveAccessControl = .userPresence) -> SecureEnclaveValet {
        scene { .valet(with: identifier, accessControl: control) }
    }

    @Test("service strings are Valet's, byte for byte, for every access control")
    func serviceStrings() {
        let base = "VAL_VALSecureEnclaveValet_initWithIdentifier:accessibility:_Druidia_AccessibleWhenPasscodeSetThisDeviceOnly"
        #expect(fixture.make { SecureEnclaveValet.valet(with: druidia, accessControl: .biometricAny) }.description.isEmpty == false)
        let valets = Self.controls.map { control in fixture.make { SecureEnclaveValet.valet(with: druidia, accessControl: control) } }
        #expect(
            valets.map { $0.service.description } == [
                base, base + "_AccessControlDevicePasscode", base + "_AccessControlTouchIDAnyFingerprint",
                base + "_AccessControlTouchIDCurrentFingerprintSet",
            ])
        let single = fixture.make { SinglePromptSecureEnclaveValet.valet(with: druidia, accessControl: .userPresence) }
        #expect(single.service.description == "VAL_VALSinglePromptSecureEnclaveValet_initWithIdentifier:accessibility:_Druidia_AccessibleWhenPasscodeSetThisDeviceOnly")
        let shared = fixture.make { SecureEnclaveValet.sharedGroupValet(with: Self.group, identifier: Identifier(nonEmpty: "valet1"), accessControl: .devicePasscode) }
        #expect(
            shared.service.description
                == "VAL_VALSecureEnclaveValet_initWithSharedAccessGroupIdentifier:accessibility:_Druidia_valet1_AccessibleWhenPasscodeSetThisDeviceOnly_AccessControlDevicePasscode"
        )
    }

    @Test("equal configurations are the same object and share data; each read asks, with the prompt")
    func sharedDataAndPrompts() throws {
        try PresenceAuthentication.withAuthenticator(authenticator) {
            let valet = enclave()
            #expect(valet === enclave() && valet == enclave())
            try valet.setString("12345", forKey: "combination")
            #expect(authenticator.promptCount == 0, "writes never ask")
            authenticator.script(.passphrase(Self.passphrase), .passphrase(Self.passphrase))
            #expect(try enclave().string(forKey: "combination", withPrompt: "Open the air shield") == "12345")
            #expect(try valet.object(forKey: "combination", withPrompt: "") == Data("12345".utf8))
            #expect(authenticator.promptCount == 2)
            #expect(authenticator.requests.first?.reason == "Open the air shield")
        }
    }

    @Test("a different access control or identifier sees nothing: itemNotFound, without asking")
    func isolation() throws {
        try PresenceAuthentication.withAuthenticator(authenticator) {
            try enclave().setString("12345", forKey: "combination")
            #expect(throws: KeychainError.itemNotFound) { try enclave(druidia, .devicePasscode).string(forKey: "combination", withPrompt: "") }
            #expect(throws: KeychainError.itemNotFound) { try enclave(Identifier(nonEmpty: "Spaceballs")!).string(forKey: "combination", withPrompt: "") }
            let grouped = scene { SecureEnclaveValet.sharedGroupValet(with: Self.group, identifier: Identifier(nonEmpty: "one"), accessControl: .userPresence) }
            let other = scene { SecureEnclaveValet.sharedGroupValet(with: Self.group, identifier: Identifier(nonEmpty: "two"), accessControl: .userPresence) }
            try grouped.setString("x", forKey: "k")
            #expect(throws: KeychainError.itemNotFound) { try other.string(forKey: "k", withPrompt: "") }
            #expect(try fixture.valet().containsObject(forKey: "combination") == false, "a plain Valet never sees them")
            #expect(authenticator.promptCount == 0)
        }
    }

    @Test("a cancelled or wrong proof is userCancelled; containsObject tells it from a missing item without asking")
    func cancelled() throws {
        try PresenceAuthentication.withAuthenticator(authenticator) {
            let valet = enclave()
            try valet.setString("12345", forKey: "combination")
            authenticator.script(.cancel, .passphrase("not it"))
            #expect(throws: KeychainError.userCancelled) { try valet.string(forKey: "combination", withPrompt: "") }
            #expect(throws: KeychainError.userCancelled) { try valet.string(forKey: "combination", withPrompt: "") }
            #expect(try valet.containsObject(forKey: "combination"))
            #expect(try !valet.containsObject(forKey: "nothing"))
            #expect(throws: KeychainError.itemNotFound) { try valet.string(forKey: "nothing", withPrompt: "") }
            #expect(authenticator.promptCount == 2)
        }
    }

    @Test("canAccessKeychain is true for every access control, standard and shared, and never asks")
    func canAccess() {
        PresenceAuthentication.withAuthenticator(authenticator) {
            for control in Self.controls {
                #expect(enclave(druidia, control).canAccessKeychain())
                #expect(scene { SecureEnclaveValet.sharedGroupValet(with: Self.group, accessControl: control) }.canAccessKeychain())
                #expect(scene { SinglePromptSecureEnclaveValet.valet(with: druidia, accessControl: control) }.canAccessKeychain())
            }
            #expect(authenticator.promptCount == 0)
        }
    }

    @Test("a biometric access control fails clearly where no biometric authenticator is supplied")
    func biometricNeedsAuthenticator() throws {
        try PresenceAuthentication.withAuthenticator(authenticator) {
            #expect(throws: KeychainError.couldNotAccessKeychain) { try enclave(druidia, .biometricAny).setString("x", forKey: "k") }
            let fingerprint = ScriptedAuthenticator([.passphrase(Self.passphrase)], offersBiometry: true)
            try PresenceAuthentication.withAuthenticator(fingerprint) {
                let valet = fixture.make { SecureEnclaveValet.valet(with: druidia, accessControl: .biometricCurrentSet) }
                try valet.setString("x", forKey: "k")
                #expect(try valet.string(forKey: "k", withPrompt: "") == "x")
            }
        }
    }

    @Test("SinglePrompt asks once, until requirePromptOnNextAccess; allKeys and contains never ask and hide the canary")
    func singlePrompt() throws {
        try PresenceAuthentication.withAuthenticator(authenticator) {
            let valet = scene { SinglePromptSecureEnclaveValet.valet(with: druidia, accessControl: .userPresence) }
            #expect(valet.canAccessKeychain())
            try valet.setString("1", forKey: "a")
            try valet.setString("2", forKey: "b")
            authenticator.script(.passphrase(Self.passphrase), .passphrase(Self.passphrase))
            #expect(try valet.string(forKey: "a", withPrompt: "once") == "1")
            #expect(try valet.string(forKey: "b", withPrompt: "") == "2")
            #expect(try valet.object(forKey: "a", withPrompt: "") == Data("1".utf8))
            #expect(authenticator.promptCount == 1)
            #expect(try valet.allKeys(userPrompt: "") == ["a", "b"])
            #expect(try valet.containsObject(forKey: "a"))
            #expect(authenticator.promptCount == 1)
            valet.requirePromptOnNextAccess()
            #expect(try valet.string(forKey: "b", withPrompt: "again") == "2")
            #expect(authenticator.promptCount == 2 && authenticator.requests.last?.reason == "again")
            try valet.removeObject(forKey: "a")
            try valet.removeAllObjects()
            #expect(try valet.allKeys(userPrompt: "").isEmpty)
        }
    }

    @Test("migration from a Valet moves the data behind the proof; a query naming an access control is invalid")
    func migration() throws {
        try PresenceAuthentication.withAuthenticator(authenticator) {
            let plain = fixture.valet("Source")
            try plain.setString("12345", forKey: "combination")
            let valet = enclave()
            #expect(valet.canAccessKeychain())
            try valet.migrateObjects(from: plain, removeOnCompletion: true)
            #expect(try plain.allKeys().isEmpty)
            authenticator.script(.passphrase(Self.passphrase))
            #expect(try valet.string(forKey: "combination", withPrompt: "") == "12345")
            #expect(throws: MigrationError.invalidQuery) {
                try valet.migrateObjects(matching: [kSecClass as String: kSecClassGenericPassword, kSecAttrAccessControl as String: "x"], removeOnCompletion: false)
            }
        }
    }

    @Test("a vault without a passphrase cannot hold Secure Enclave items")
    func noPassphrase() throws {
        try PresenceAuthentication.withAuthenticator(authenticator) {
            let keyless = try Fixture()
            let valet = keyless.make { SecureEnclaveValet.valet(with: druidia, accessControl: .userPresence) }
            #expect(!valet.canAccessKeychain())
            #expect(throws: KeychainError.couldNotAccessKeychain) { try valet.setString("x", forKey: "k") }
        }
    }
}

@Suite(
    "SecureEnclaveValet on the Secret Service, which cannot bind items to a proof",
    .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
struct SecureEnclaveOnSecretService {
    @Test("canAccessKeychain is false and writes fail, rather than storing the secret unprotected")
    func refused() throws {
        let fixture = try Fixture(.secretService)
        let valet = fixture.make { SecureEnclaveValet.valet(with: druidia, accessControl: .userPresence) }
        #expect(!valet.canAccessKeychain())
        #expect(throws: KeychainError.couldNotAccessKeychain) { try valet.setString("x", forKey: "k") }
        #expect(try !valet.containsObject(forKey: "k"))
    }
}
