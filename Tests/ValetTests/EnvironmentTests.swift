import Foundation
import KeychainTestSupport
import Testing

/// A Valet program and the `keychain` command given the same variables open the same vault the
/// same way: one reading of the environment (`VaultConfiguration.fromEnvironment`) serves both.
@Suite("A Valet program reads the environment as the command does", .serialized)
struct EnvironmentTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }
    var base: [String: String] { ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_PATH": vaultPath] }
    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, environment: ["KEYCHAIN_PATH": vaultPath]) }

    /// A program with nothing but Valet's API reading Druidia's Skroob (`keychain-reliability worker valet-service`).
    func valet(_ environment: [String: String]) throws -> CommandResult {
        try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: base.merging(environment) { $1 })
    }

    @Test("KEYCHAIN_PATH: what the command stores there, a Valet program reads there")
    func samePath() throws {
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        let read = try valet(["KEYCHAIN_KERNEL_KEYRING": "off"])
        #expect(read.status == 0 && read.output == "12345\n", "\(read.output) \(read.stderr)")
    }

    @Test(
        "a mistyped KEYCHAIN_KERNEL_KEYRING or KEYCHAIN_UNLOCK_TIMEOUT is refused by both, by name",
        arguments: [("KEYCHAIN_KERNEL_KEYRING", "of"), ("KEYCHAIN_UNLOCK_TIMEOUT", "5m")])
    func sameRefusals(_ variable: String, _ value: String) throws {
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        let command = try keychain(["get", "--identifier", "Druidia", "Skroob"], environment: [variable: value])
        #expect(command.status == 2 && command.stderr.contains(value), "\(command.stderr)")
        let program = try valet([variable: value])
        #expect(program.status == 1 && program.output.contains(value) && !program.output.contains("12345"), "\(program.output)")
    }

    @Test("KEYCHAIN_KERNEL_KEYRING: after `keychain unlock`, a Valet program reads a whenUnlocked item through the kernel keyring when on, and not when off")
    func sameKernelKeyring() throws {
        let passphrase = directory.file("pw", "correct horse")
        let on = ["KEYCHAIN_KERNEL_KEYRING": "on"]
        #expect(try keychain(["set", "--identifier", "Druidia", "Skroob"], input: "12345").status == 0)
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        #expect(try keychain(["unlock"], environment: on.merging(["KEYCHAIN_PASSPHRASE_FILE": passphrase]) { $1 }).status == 0)
        defer { _ = try? keychain(["lock"], environment: on) }
        let shared = try valet(on)
        #expect(shared.status == 0 && shared.output == "12345\n", "the user's unlock reaches the Valet program: \(shared.output)")
        let alone = try valet(["KEYCHAIN_KERNEL_KEYRING": "off"])
        #expect(alone.status == 1 && alone.output.contains("locked"), "with the kernel keyring off, it sees only its own unlock: \(alone.output)")
    }
}
