import Foundation
import KeychainTestSupport
import Testing
import Valet

@Suite("Valet on the vault: Valet's integration suite")
struct ValetOnVault {
    @Test(arguments: ValetBehaviour.allCases)
    func behaviour(_ behaviour: ValetBehaviour) throws {
        try behaviour.run(Fixture(.vault, passphrase: ValetBehaviour.passphrase))
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

    @Test("a locked vault refuses whenUnlocked reads as couldNotAccessKeychain, not as a missing item")
    func lockedVault() throws {
        let fixture = try Fixture(.vault, passphrase: ValetBehaviour.passphrase)
        let valet = fixture.valet()
        try valet.setString("12345", forKey: "Skroob")
        fixture.vault!.lock()
        #expect(throws: KeychainError.couldNotAccessKeychain) { try valet.string(forKey: "Skroob") }
        #expect(!valet.canAccessKeychain())
        try fixture.vault!.unlock(passphrase: secret(ValetBehaviour.passphrase))
        #expect(try valet.string(forKey: "Skroob") == "12345")
    }
}

@Suite(
    "Valet on the Secret Service: Valet's integration suite",
    .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
struct ValetOnSecretService {
    @Test(arguments: ValetBehaviour.allCases)
    func behaviour(_ behaviour: ValetBehaviour) throws {
        try behaviour.run(Fixture(.secretService))
    }
}
