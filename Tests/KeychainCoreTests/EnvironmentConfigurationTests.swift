import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// One reading of the environment for every program: the `keychain` command and a Valet
/// program given the same variables open the vault the same way.
@Suite("The environment's vault configuration, read once for every program")
struct EnvironmentConfigurationTests {
    let directory = TemporaryDirectory()

    @Test("KEYCHAIN_PATH, KEYCHAIN_KERNEL_KEYRING and KEYCHAIN_UNLOCK_TIMEOUT reach the store a library program opens, as they reach the command's")
    func libraryHonoursTheCommandsVariables() throws {
        let environment = [
            "KEYCHAIN_PATH": directory.vaultPath(), "KEYCHAIN_KERNEL_KEYRING": "off", "KEYCHAIN_UNLOCK_TIMEOUT": "42", "HOME": directory.path,
        ]
        let vault = try #require(try StoreKind.vault.open(environment: environment) as? Vault)
        #expect(vault.configuration.location.path == directory.vaultPath())
        #expect(!vault.configuration.usesKernelKeyring)
        #expect(vault.configuration.userUnlockTimeout == .seconds(42))
        let processOnly = try VaultConfiguration.fromEnvironment(["KEYCHAIN_UNLOCK_TIMEOUT": "0", "HOME": directory.path])
        #expect(processOnly.userUnlockTimeout == nil && processOnly.usesKernelKeyring)
    }

    @Test("a mistyped value is refused by name, not taken as the default")
    func mistypedValuesRefused() {
        #expect(throws: StoreError.self) { _ = try VaultConfiguration.fromEnvironment(["KEYCHAIN_KERNEL_KEYRING": "of", "HOME": directory.path]) }
        #expect(throws: StoreError.self) { _ = try VaultConfiguration.fromEnvironment(["KEYCHAIN_UNLOCK_TIMEOUT": "5m", "HOME": directory.path]) }
    }
}
