import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// `migrate --foreign` plans the whole move before it deletes anything: conflicts within the
/// source as well as against the vault, and a second run after one that stopped early.
@Suite(
    "migrate --foreign: one plan before any delete",
    .enabled(if: PrivateSecretService.unavailableReason == nil, "\(PrivateSecretService.unavailableReason ?? "")"),
    .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct MigrationPlanTests {
    /// Secrets of the vault's served items whose row matches `prefix` (group|collection|).
    static func secrets(_ setup: ProviderSwitchTests.Switch) throws -> [String] {
        try setup.vaultRows().filter { $0.hasPrefix("org.freedesktop.secrets.secret|login|") }.map { String($0.split(separator: "|", omittingEmptySubsequences: false).last ?? "") }
            .sorted()
    }

    @Test(
        "two gnome-keyring items of one identity, the vault holding a third, under --conflict replace: both secrets come into the vault, both leave gnome-keyring, and the command says they were kept apart",
        .enabled(if: PythonClient.unavailableReason == nil, "\(PythonClient.unavailableReason ?? "")"))
    func twoSourceItemsOfOneIdentity() throws {
        let setup = try ProviderSwitchTests.Switch()
        try setup.store("gk-first", ["service", "dup", "user", "u"], secret: "vault-old")
        #expect(try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--keep-source"]).status == 0)
        // gnome-keyring's item changes, and a second one of the same attributes comes beside it.
        try setup.store("gk-first", ["service", "dup", "user", "u"], secret: "first")
        let made = try Subprocess.run(
            PythonClient.python,
            [
                "-c",
                "import secretstorage; c = secretstorage.dbus_init(); secretstorage.get_default_collection(c).create_item('gk-second', {'service': 'dup', 'user': 'u'}, b'second', replace=False)",
            ],
            environment: setup.environment)
        #expect(made.status == 0, "\(made.stderr)")
        let listed = try setup.secretTool(["search", "--all", "service", "dup"])
        #expect(listed.output.components(separatedBy: "secret = ").count - 1 == 2, "\(listed.output)")

        let moved = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--conflict", "replace"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stderr.contains("1 added, 1 replaced"), "\(moved.stderr)")
        #expect(moved.stderr.contains("1 item(s) have the attributes of another item of their collection ('gk-"), "\(moved.stderr)")
        #expect(try Self.secrets(setup) == ["first", "second"])
        #expect(try setup.secretTool(["search", "--all", "service", "dup"]).output.isEmpty)
    }

    @Test("a move that stopped after the vault's write (its items in both places) is finished by running it again: nothing conflicts with itself, the source is emptied")
    func rerunFinishesAnInterruptedMove() throws {
        let setup = try ProviderSwitchTests.Switch()
        try setup.store("one", ["app", "demo", "n", "1"], secret: "first")
        try setup.store("two", ["app", "demo", "n", "2"], secret: "second")
        // What a run cut after the vault's write leaves: every item in the vault and still in gnome-keyring.
        #expect(try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--keep-source"]).status == 0)
        // And one stored into gnome-keyring since.
        try setup.store("three", ["app", "demo", "n", "3"], secret: "third")

        let finished = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.contains("1 added, 0 replaced"), "\(finished.stderr)")
        #expect(finished.stderr.contains("2 item(s) were in the vault already"), "\(finished.stderr)")
        #expect(try setup.secretTool(["search", "--all", "app", "demo"]).output.isEmpty)
        #expect(try Self.secrets(setup) == ["first", "second", "third"])
    }

    @Test("back: a move that stopped after the provider took the items is finished by running it again: each item once in gnome-keyring, none left in the vault")
    func rerunFinishesAnInterruptedMoveBack() throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=one", "app", "demo", "n", "1"], input: "first").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=two", "app", "demo", "n", "2"], input: "second").status == 0)
        served.stopServing()
        let keyring = try PrivateSecretService()
        let environment = served.environment.merging(["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress]) { $1 }
        // What a run cut before the vault's delete leaves: every item in gnome-keyring and still in the vault.
        let copied = try Subprocess.run(
            KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service", "--keep-source"], environment: environment)
        #expect(copied.status == 0, "\(copied.stderr)")

        let finished = try Subprocess.run(KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"], environment: environment)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.contains("0 added, 0 replaced, 0 kept"), "\(finished.stderr)")
        #expect(finished.stderr.contains("2 item(s) were in the Secret Service already"), "\(finished.stderr)")
        #expect(try ProviderSwitchTests.itemCount(of: "/org/freedesktop/secrets/collection/login", environment) == 2)
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "n", "2"], environment: environment).output == "second")
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: served.vaultPath)))
        let left = (try? vault.copyMatching(Query(.genericPassword, attributes: Attributes(accessGroup: "org.freedesktop.secrets.secret", synchronizable: false)))) ?? []
        #expect(left.isEmpty)
    }

    @Test("--unlock opens a locked gnome-keyring collection headless with its password read from standard input, and its items move; a wrong password moves nothing")
    func unlockLockedCollectionHeadless() throws {
        let setup = try ProviderSwitchTests.Switch()
        try setup.store("locked", ["service", "behind-lock"], secret: "hidden")
        try setup.keyring.lockDefaultCollection()
        let arguments = ["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--unlock"]
        let wrong = try Subprocess.run(KeychainExecutable.path, arguments, environment: setup.environment, input: Data("not-the-password\n".utf8))
        #expect(wrong.status == 3, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("the password does not open the Secret Service's collection 'Login'"), "\(wrong.stderr)")
        #expect(try Self.secrets(setup).isEmpty)

        let opened = try Subprocess.run(KeychainExecutable.path, arguments, environment: setup.environment, input: Data("test-password\n".utf8))
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stderr.contains("unlocked the Secret Service's collection 'Login'"), "\(opened.stderr)")
        #expect(try Self.secrets(setup) == ["hidden"])
        #expect(try setup.secretTool(["search", "--all", "service", "behind-lock"]).output.isEmpty)
    }
}
