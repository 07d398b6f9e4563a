import Foundation
import KeychainTestSupport
import Testing

/// The README's service vault made from nothing: `passwd` reads the credential on standard
/// input and makes the vault with it, `set` stores the token with the credential as the
/// passphrase, and a Valet program started as the service is reads it.
@Suite("A service's passphrase vault, made from nothing")
struct ServiceVaultRecipeTests {
    let directory = TemporaryDirectory()

    @Test("passwd from the credential on standard input makes the vault, set stores the token, the service's Valet reads it, and nothing else can")
    func recipeFromTheReadme() throws {
        let credentials = directory.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        _ = directory.file("credentials/keychain-passphrase", "a long random passphrase")
        chmod(credentials + "/keychain-passphrase", 0o600)
        let service = [
            "PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_KERNEL_KEYRING": "off", "CREDENTIALS_DIRECTORY": credentials,
            "KEYCHAIN_PATH": directory.path + "/secrets.keychain", "K": KeychainExecutable.path,
        ]
        let made = try Subprocess.run("/bin/sh", ["-c", #""$K" passwd < "$CREDENTIALS_DIRECTORY/keychain-passphrase""#], environment: service)
        #expect(made.status == 0, "\(made.stderr)")
        let stored = try Subprocess.run(KeychainExecutable.path, ["set", "-i", "Deployer", "api-token"], environment: service, input: Data("tok-123".utf8))
        #expect(stored.status == 0, "\(stored.stderr)")
        let read = try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Deployer", "api-token"], environment: service)
        #expect(read.status == 0 && read.output == "tok-123\n", "\(read.output)")
        var outsider = service
        outsider["CREDENTIALS_DIRECTORY"] = nil
        let locked = try Subprocess.run(KeychainExecutable.path, ["get", "-i", "Deployer", "api-token"], environment: outsider)
        #expect(locked.status == 3, "without the credential the vault stays shut: \(locked.stderr)")
    }
}
