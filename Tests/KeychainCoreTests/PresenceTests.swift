import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Items under an access control: sealed to the presence key, opened only with the proof.
@Suite("User presence: a value behind an access control opens only with the proof")
struct PresenceTests {
    let directory = TemporaryDirectory()
    let passphrase = "presence-tests"

    func vault(passphrase: String? = "presence-tests") throws -> Vault {
        let vault = try Vault(directory.vaultConfiguration())
        if let passphrase { try vault.changePassphrase(from: nil, to: secret(passphrase)) }
        return vault
    }

    func item(_ account: String = "pin", _ value: String = "1234", control: AccessControl = .userPresence) -> Item {
        Item(
            .genericPassword,
            attributes: Attributes(
                service: "bank", account: account, accessibility: .whenPasscodeSetThisDeviceOnly,
                accessControl: control), value: secret(value))
    }

    func read(_ vault: Vault, _ account: String = "pin", context: AuthenticationContext) throws(StoreError) -> String? {
        try vault.copyMatching(
            Query(
                .genericPassword, attributes: Attributes(service: "bank", account: account), limit: .one,
                returnData: true, authentication: context)
        ).first?.value?.string
    }

    @Test("writing needs no proof; every read asks once and gets the value with the right passphrase")
    func readAsksEachTime() throws {
        let vault = try vault()
        let authenticator = ScriptedAuthenticator([.passphrase(passphrase), .passphrase(passphrase)])
        try vault.add(item())
        #expect(authenticator.promptCount == 0)
        #expect(try read(vault, context: AuthenticationContext(authenticator: authenticator, reason: "Pay the bill")) == "1234")
        #expect(try read(vault, context: AuthenticationContext(authenticator: authenticator)) == "1234")
        #expect(authenticator.promptCount == 2)
        let request = try #require(authenticator.requests.first)
        #expect(request.reason == "Pay the bill" && request.accessControl == .userPresence && request.vaultPath == vault.location.path)
    }

    @Test("a cancelled prompt is userCancelled, a wrong passphrase authenticationFailed, and the item is intact")
    func refusals() throws {
        let vault = try vault()
        try vault.add(item())
        let authenticator = ScriptedAuthenticator([.cancel, .passphrase("wrong"), .unavailable, .passphrase(passphrase)])
        #expect(throws: StoreError.userCancelled) { try read(vault, context: AuthenticationContext(authenticator: authenticator)) }
        #expect(throws: StoreError.authenticationFailed) { try read(vault, context: AuthenticationContext(authenticator: authenticator)) }
        #expect(throws: StoreError.unavailable("scripted: no way to ask")) { try read(vault, context: AuthenticationContext(authenticator: authenticator)) }
        #expect(try read(vault, context: AuthenticationContext(authenticator: authenticator)) == "1234")
    }

    @Test("a context that reuses proofs asks once until invalidate()")
    func reuse() throws {
        let vault = try vault()
        try vault.add(item("a", "1"))
        try vault.add(item("b", "2"))
        let authenticator = ScriptedAuthenticator([.passphrase(passphrase), .passphrase(passphrase)])
        let context = AuthenticationContext(authenticator: authenticator, reusesProof: true)
        #expect(try read(vault, "a", context: context) == "1")
        #expect(try read(vault, "b", context: context) == "2")
        #expect(try read(vault, "a", context: context) == "1")
        #expect(authenticator.promptCount == 1)
        context.invalidate()
        #expect(try read(vault, "b", context: context) == "2")
        #expect(authenticator.promptCount == 2)
    }

    @Test("an unlocked vault without the proof cannot read the value; contains and attributes never ask")
    func noProofNoValue() throws {
        let vault = try vault()
        try vault.add(item())
        let authenticator = ScriptedAuthenticator()
        let silent = AuthenticationContext(authenticator: authenticator, interactionNotAllowed: true)
        #expect(throws: StoreError.interactionNotAllowed) { try read(vault, context: silent) }
        #expect(try vault.contains(Query(.genericPassword, attributes: Attributes(service: "bank", account: "pin"))))
        let listed = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "bank"), authentication: silent))
        #expect(listed.map(\.attributes.account) == ["pin"] && listed[0].attributes.accessControl == .userPresence && listed[0].value == nil)
        #expect(authenticator.promptCount == 0)
    }

    @Test("a query for one item under an access control passes over the items before it that have none")
    func firstMatchUnderAccessControl() throws {
        let vault = try vault()
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "bank", account: "plain", accessibility: .whenPasscodeSetThisDeviceOnly), value: secret("0")))
        try vault.add(item())
        let query = Query(.genericPassword, attributes: Attributes(accessControl: .userPresence), limit: .one, returnAttributes: false)
        #expect(try vault.contains(query))
        #expect(try vault.copyMatching(query).count == 1)
    }

    @Test("stripping the access control from the stored protection code is detected, not a way around the proof")
    func downgradeIsDetected() throws {
        let vault = try vault()
        try vault.add(item())
        let raw = try RawVault(vault.location.path)
        try raw.connection.execute("UPDATE items SET protection = protection & 15")
        let authenticator = ScriptedAuthenticator([.passphrase(passphrase)])
        do {
            _ = try read(vault, context: AuthenticationContext(authenticator: authenticator))
            Issue.record("a downgraded item was read")
        } catch {
            guard case .tampered = error else { Issue.record("expected tampered, got \(error)"); return }
        }
    }

    @Test("the proof is the current passphrase: after a change the old one is refused; removing it destroys the items")
    func passphraseChanges() throws {
        let vault = try vault()
        try vault.add(item())
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "plain", account: "x", accessibility: .whenUnlocked), value: secret("kept")))
        try vault.changePassphrase(from: secret(passphrase), to: secret("new one"))
        let authenticator = ScriptedAuthenticator([.passphrase(passphrase), .passphrase("new one")])
        #expect(throws: StoreError.authenticationFailed) { try read(vault, context: AuthenticationContext(authenticator: authenticator)) }
        #expect(try read(vault, context: AuthenticationContext(authenticator: authenticator)) == "1234")
        try vault.changePassphrase(from: secret("new one"), to: nil)
        #expect(throws: StoreError.itemNotFound) { try read(vault, context: AuthenticationContext(authenticator: authenticator)) }
        #expect(throws: StoreError.passphraseRequired) { try vault.add(item()) }
        #expect(try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "plain"), returnData: true)).first?.value?.string == "kept")
    }

    @Test("a vault without a passphrase cannot hold such items, as a device without a passcode")
    func needsPassphrase() throws {
        let vault = try vault(passphrase: nil)
        #expect(throws: StoreError.passphraseRequired) { try vault.add(item()) }
        #expect(!vault.supportsAccessControl)
    }

    @Test("biometric access controls fail clearly without a biometric authenticator, and work with one")
    func biometry() throws {
        let vault = try vault()
        #expect(vault.supportsAccessControl)
        do {
            try vault.add(item(control: .biometryAny))
            Issue.record("a biometric item was written with no biometric authenticator")
        } catch {
            guard case .unavailable(let why) = error else { Issue.record("expected unavailable, got \(error)"); return }
            #expect(why.contains("biometric"))
        }
        let fingerprint = ScriptedAuthenticator([.passphrase(passphrase)], offersBiometry: true)
        try PresenceAuthentication.withAuthenticator(fingerprint) {
            try vault.add(item(control: .biometryCurrentSet))
        }
        let plain = ScriptedAuthenticator([.passphrase(passphrase)])
        #expect(throws: StoreError.self) { try read(vault, context: AuthenticationContext(authenticator: plain)) }
        #expect(plain.promptCount == 0)
        #expect(try read(vault, context: AuthenticationContext(authenticator: fingerprint)) == "1234")
    }

    @Test("another handle on the vault (another process) reads the item with the proof")
    func reopened() throws {
        let vault = try vault()
        try vault.add(item())
        let other = try Vault(directory.vaultConfiguration())
        try other.unlock(passphrase: secret(passphrase))
        let authenticator = ScriptedAuthenticator([.passphrase(passphrase)])
        #expect(try read(other, context: AuthenticationContext(authenticator: authenticator)) == "1234")
    }
}
