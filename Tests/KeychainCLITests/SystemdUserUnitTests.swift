import Foundation
import KeychainCore
import Testing

@testable import KeychainCLI

/// Where systemd runs the user's session, `sync init` and `join` install a
/// user service that keeps the vault's sync agent running.
@Suite("The sync agent's systemd user unit")
struct SystemdUserUnitTests {
    @Test("the unit runs 'keychain sync run' for this vault, restarts it on failure, starts with the session, and quotes what systemd would expand")
    func unitContents() {
        let unit = SystemdUserUnit(
            vault: VaultLocation(path: "/home/ann/my vault/50%$HOME.keychain"), executable: "/opt/kc/bin/keychain", directory: "/home/ann/.config/systemd/user")
        #expect(unit.name.hasPrefix("keychain-sync-") && unit.name.hasSuffix(".service"))
        let lines = unit.contents.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"ExecStart="/opt/kc/bin/keychain" sync run --vault "/home/ann/my vault/50%%$$HOME.keychain""#), "\(unit.contents)")
        #expect(lines.contains("Restart=on-failure"))
        #expect(lines.contains("WantedBy=default.target"))
        #expect(lines.contains("Environment=KEYCHAIN_SYNC_AGENT=off"))
        #expect(!unit.contents.contains("--idle"), "a service runs for the session, not until idle")
    }

    @Test("one unit name per vault, the same each time")
    func oneNamePerVault() {
        func name(_ path: String) -> String { SystemdUserUnit(vault: VaultLocation(path: path), executable: "/usr/bin/keychain", directory: "/d").name }
        #expect(name("/a/one.keychain") == name("/a/one.keychain"))
        #expect(name("/a/one.keychain") != name("/a/two.keychain"))
    }

    @Test("no systemd user manager in the environment (a container, CI): no unit, the on-demand agent instead")
    func noUserManager() {
        let location = VaultLocation(path: "/tmp/v.keychain")
        #expect(SystemdUserUnit(vault: location, executable: "/usr/bin/keychain", environment: ["HOME": "/root"]) == nil)
        #expect(SystemdUserUnit(vault: location, executable: "/usr/bin/keychain", environment: ["HOME": "/root", "XDG_RUNTIME_DIR": "/nonexistent"]) == nil)
    }

    @Test("a vault with a passphrase gets a service only with a passphrase file, read as the systemd credential the agent looks for")
    func passphraseVaultNeedsACredential() {
        typealias Source = SystemdUserUnit.PassphraseSource
        #expect(Source(vaultHasPassphrase: false, environment: [:]) == .notNeeded)
        guard case .refused(let why) = Source(vaultHasPassphrase: true, environment: ["HOME": "/home/ann"]) else {
            Issue.record("a passphrase vault with no passphrase file got a service")
            return
        }
        #expect(why.contains("KEYCHAIN_PASSPHRASE_FILE"))
        #expect(Source(vaultHasPassphrase: true, environment: ["KEYCHAIN_PASSPHRASE_FILE": "/home/ann/.pw"]) == .credential(file: "/home/ann/.pw"))

        let unit = SystemdUserUnit(
            vault: VaultLocation(path: "/home/ann/v.keychain"), executable: "/usr/bin/keychain", directory: "/d", passphraseFile: "/home/ann/50%.pw")
        let lines = unit.contents.split(separator: "\n").map(String.init)
        #expect(lines.contains("LoadCredential=keychain-passphrase:/home/ann/50%%.pw"), "\(unit.contents)")
        let plain = SystemdUserUnit(vault: VaultLocation(path: "/home/ann/v.keychain"), executable: "/usr/bin/keychain", directory: "/d")
        #expect(!plain.contents.contains("LoadCredential"))
    }

    @Test("an agent started on demand keeps only the variables it needs, with a relative passphrase file named whole")
    func agentEnvironmentIsMinimal() {
        let kept = SyncAgent.agentEnvironment([
            "HOME": "/home/ann", "MY_API_TOKEN": "t", "PATH": "/usr/bin", "KEYCHAIN_PASSPHRASE_FILE": "pw.txt", "https_proxy": "http://127.0.0.1:3128",
            "KEYCHAIN_KERNEL_KEYRING": "on", "LD_PRELOAD": "/tmp/x.so",
        ])
        #expect(kept["MY_API_TOKEN"] == nil && kept["PATH"] == nil && kept["LD_PRELOAD"] == nil)
        #expect(kept["HOME"] == "/home/ann" && kept["https_proxy"] == "http://127.0.0.1:3128" && kept["KEYCHAIN_KERNEL_KEYRING"] == "on")
        #expect(kept["KEYCHAIN_PASSPHRASE_FILE"] == FileManager.default.currentDirectoryPath + "/pw.txt")
        #expect(kept["KEYCHAIN_SYNC_AGENT"] == "off")
    }
}
