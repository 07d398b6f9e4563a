import Foundation
import KeychainTestSupport
import Testing

/// The vault's lock is the Secret Service's: a locked vault serves no secret and takes no item.
@Suite("keychain serve over a locked vault", .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct LockedVaultTests {
    /// A vault with a passphrase, and the file that holds it.
    static func passphraseVault(_ served: ServedVault) throws -> String {
        let file = served.directory.path + "/passphrase"
        _ = FileManager.default.createFile(atPath: file, contents: Data("pass-phrase-1".utf8), attributes: [.posixPermissions: 0o600])
        let set = try Subprocess.run(KeychainExecutable.path, ["passwd"], environment: served.environment.merging(["KEYCHAIN_NEW_PASSPHRASE_FILE": file]) { $1 })
        #expect(set.status == 0, "\(set.stderr)")
        return file
    }

    @Test("secret-tool is told to run keychain unlock when the vault is locked, and the daemon stays up")
    func lockedVaultRefusesAndSaysHow() throws {
        let served = try ServedVault(serving: false)
        _ = try Self.passphraseVault(served)
        try served.startServing()
        #expect(served.waitForProvider())
        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value")
        #expect(stored.status != 0)
        #expect(stored.stderr.contains("keychain unlock"), "\(stored.stderr)")
        #expect(!stored.stderr.contains("CRITICAL"), "\(stored.stderr)")
        let looked = try served.run("/usr/bin/secret-tool", ["lookup", "service", "x"])
        #expect(looked.status != 0)
        #expect(looked.stderr.contains("keychain unlock"), "\(looked.stderr)")
        #expect(!looked.stderr.contains("CRITICAL"), "\(looked.stderr)")
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }

    @Test("with the passphrase from KEYCHAIN_PASSPHRASE_FILE it serves; Lock closes the secrets again")
    func passphraseFileOpensAndLockCloses() throws {
        let served = try ServedVault(serving: false)
        let file = try Self.passphraseVault(served)
        try served.startServing(environment: ["KEYCHAIN_PASSPHRASE_FILE": file])
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "x"]).output == "value")

        // Lock, as a desktop's lock command sends it (Debian 12's `secret-tool lock` crashes in
        // libsecret before it sends anything, against gnome-keyring too).
        let locked = try served.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ])
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(locked.output.contains("/org/freedesktop/secrets/collection/login"), "\(locked.output)")
        let after = try served.run("/usr/bin/secret-tool", ["lookup", "service", "x"])
        #expect(after.status != 0)
        #expect(after.output.isEmpty)
        // The item is still listed (its attributes are not secret), but without its secret.
        let searched = try served.run("/usr/bin/secret-tool", ["search", "service", "x"])
        #expect(!searched.output.contains("secret = value"), "\(searched.output)")
    }
}
