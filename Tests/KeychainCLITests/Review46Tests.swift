import Foundation
import KeychainTestSupport
import Testing

/// What a review of #46 found in the command, walking the login as a new user.
@Suite("Review of #46: the command")
struct CommandReview46Tests {
    let home = TemporaryDirectory()

    @Test("status of an open vault that holds no item counts 0 items, not rows it says wait for an unlock")
    func emptyOpenVaultCountsNoItems() throws {
        let keychain = KeychainCommandLine(home: home.path)
        #expect(try keychain(["set", "--service", "s", "--account", "a"], input: "v").status == 0)
        #expect(try keychain(["remove", "--service", "s", "--account", "a"]).status == 0)
        let status = try keychain(["status"])
        let line = status.output.split(separator: "\n").first { $0.hasPrefix("items:") }.map(String.init) ?? ""
        #expect(line.hasSuffix(" 0"), "\(line)")
        #expect(!status.output.contains("counted once the vault is unlocked"), "\(status.output)")
    }
}
