import Foundation
import KeychainTestSupport
import Testing

/// A Valet program can tell why it failed. Valet's error is one case for a
/// locked vault, a wrong passphrase and a passphrase file others can read; `FailureLog.last`
/// holds the reason, and `KEYCHAIN_LOG=1` writes it to standard error.
@Suite("The library says why")
struct FailureReasonTests {
    let directory = TemporaryDirectory()

    @Test("a locked vault, a wrong passphrase and a 0644 passphrase file: three reasons, logged with KEYCHAIN_LOG=1 and kept in FailureLog.last")
    func reasons() throws {
        let path = directory.vaultPath()
        let right = directory.file("pw", "correct horse")
        let set = try KeychainExecutable.run(["set", "--vault", path, "--identifier", "Druidia", "Skroob"], input: Data("12345".utf8), home: directory.path)
        #expect(set.status == 0)
        let passwd = try KeychainExecutable.run(["passwd", "--vault", path], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": right], home: directory.path)
        #expect(passwd.status == 0, "\(passwd.stderr)")
        let wrong = directory.file("wrong", "battery staple")
        let open = directory.file("open", "correct horse")
        chmod(open, 0o644)
        let base = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "KEYCHAIN_PATH": path, "KEYCHAIN_KERNEL_KEYRING": "off"]
        for (credential, reason) in [(nil, "locked"), (wrong, "passphrase is incorrect"), (open, "other users can read")] {
            var environment = base
            environment["KEYCHAIN_PASSPHRASE_FILE"] = credential
            let quiet = try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: environment)
            #expect(quiet.status == 1 && quiet.output.contains("couldNotAccessKeychain") && quiet.output.contains(reason), "\(quiet.output)")
            #expect(quiet.stderr.isEmpty, "nothing is logged without KEYCHAIN_LOG: \(quiet.stderr)")
            environment["KEYCHAIN_LOG"] = "1"
            let logged = try Subprocess.run(KeychainExecutable.reliabilityPath, ["worker", "valet-service", "Druidia", "Skroob"], environment: environment)
            #expect(logged.stderr.hasPrefix("keychain: ") && logged.stderr.contains(reason), "\(logged.stderr)")
            #expect(!logged.stderr.contains("correct horse") && !logged.stderr.contains("battery") && !logged.stderr.contains("12345"), "never a secret")
        }
    }
}
