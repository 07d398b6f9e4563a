import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// An export or a migration that would leave items of a locked class behind
/// fails (status 3, `StoreError.locked`) unless asked to skip them, and then says how many.
@Suite("Partial is never success: export and migrate with items of a locked class")
struct PartialTransferTests {
    let directory = TemporaryDirectory()

    @Test("the command: after the user's unlock times out, export exits 3 and writes nothing; with --skip-locked it says how many stayed behind")
    func commandExport() throws {
        let path = directory.vaultPath()
        let keychain = KeychainCommandLine(home: directory.path, vault: path, environment: ["KEYCHAIN_KERNEL_KEYRING": "on"])
        let passphrase = directory.file("pw", "correct horse")
        let archivePassphrase = directory.file("archive-pw", "archive pw")
        for (key, accessibility) in [("one", "whenUnlocked"), ("two", "whenUnlocked"), ("three", "afterFirstUnlock")] {
            #expect(try keychain(["set", "--service", "s", "--accessibility", accessibility, key], input: key).status == 0)
        }
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        #expect(try keychain(["unlock", "--timeout", "1"], environment: ["KEYCHAIN_PASSPHRASE_FILE": passphrase]).status == 0)
        defer { _ = try? keychain(["lock"]) }
        Thread.sleep(forTimeInterval: 2.5)

        let file = directory.path + "/export.skcx"
        let refused = try keychain(["export", file], environment: ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": archivePassphrase])
        #expect(refused.status == 3 && refused.stderr.contains("2 item(s) are in a locked class"), "\(refused.status) \(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file), "nothing was written")
        let skipped = try keychain(["export", "--skip-locked", file], environment: ["KEYCHAIN_ARCHIVE_PASSPHRASE_FILE": archivePassphrase])
        #expect(skipped.status == 0 && skipped.stderr.contains("exported 1 item(s)") && skipped.stderr.contains("2 in a locked class"), "\(skipped.stderr)")
    }

    @Test("the library: transferableItems and move throw locked and move nothing; with skipLocked they count what stayed behind")
    func library() throws {
        let source = try Vault(directory.vaultConfiguration(name: "source.keychain"))
        try source.changePassphrase(from: nil, to: secret("pw"))
        for (account, accessibility) in [("one", Accessibility.whenUnlocked), ("two", .whenUnlocked), ("three", .afterFirstUnlock)] {
            try source.add(Item(.genericPassword, attributes: Attributes(service: "s", account: account, accessibility: accessibility), value: secret(account)))
        }
        source.lock()
        let destination = try Vault(directory.vaultConfiguration(name: "destination.keychain"))
        #expect(try ItemTransfer.lockedItemCount(of: source) == 2)
        #expect(throws: StoreError.locked) { try ItemTransfer.transferableItems(of: source) }
        #expect(throws: StoreError.locked) { try ItemTransfer.move(from: source, to: destination, rule: .refuse, keepSource: false) }
        #expect(throws: StoreError.itemNotFound) { try destination.copyMatching(Query(.genericPassword)) }

        let (items, leftovers) = try ItemTransfer.transferableItems(of: source, skipLocked: true)
        #expect(items.count == 1 && leftovers.locked == 2 && leftovers.total == 2)
        let (outcome, moved) = try ItemTransfer.move(from: source, to: destination, rule: .refuse, keepSource: false, skipLocked: true)
        #expect(outcome.added == 1 && moved.locked == 2)
    }
}
