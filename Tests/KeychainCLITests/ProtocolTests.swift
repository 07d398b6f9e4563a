import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// `--protocol` takes Apple's codes and their familiar names, nothing else;
/// `list` shows what tells a login's items apart, and `remove` says when it removed several.
@Suite("Protocols are Apple's codes")
struct ProtocolTests {
    let directory = TemporaryDirectory()

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: directory.vaultPath()) }

    @Test("https and htps are one item, stored under Apple's code, which the library finds as .https; a typo is refused with the list")
    func namesAndCodes() throws {
        #expect(try keychain(["set", "--server", "github.com", "--protocol", "https", "alice"], input: "one").status == 0)
        #expect(try keychain(["set", "--server", "github.com", "--protocol", "htps", "alice"], input: "two").status == 0)
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: directory.vaultPath()), usesKernelKeyring: false))
        let items = try vault.copyMatching(Query(.internetPassword, attributes: Attributes(account: "alice", server: "github.com"), returnData: true))
        #expect(items.count == 1 && items.first?.attributes.protocol == .https && items.first?.value?.string == "two", "\(items)")
        for wrong in ["nonsense", "htp"] {
            let refused = try keychain(["set", "--server", "github.com", "--protocol", wrong, "alice"], input: "x")
            #expect(refused.status == 2 && refused.stderr.contains("unknown protocol") && refused.stderr.contains("https"), "\(refused.stderr)")
        }
        #expect(try keychain(["set", "--server", "example.org", "--protocol", "ftp", "bob"], input: "f").status == 0)
        let ftp = try vault.copyMatching(Query(.internetPassword, attributes: Attributes(account: "bob", server: "example.org")))
        #expect(ftp.first?.attributes.protocol == .ftp && ftp.first?.attributes.protocol?.rawValue == "ftp ")
    }

    @Test("list shows protocol, port and path; a remove that matches several items says how many it removed")
    func listAndRemove() throws {
        #expect(try keychain(["set", "--server", "github.com", "--protocol", "https", "alice"], input: "one").status == 0)
        #expect(try keychain(["set", "--server", "github.com", "--protocol", "ssh", "--port", "22", "--path", "/repo", "alice"], input: "two").status == 0)
        let list = try keychain(["list", "--server", "github.com"])
        #expect(list.status == 0 && list.output.contains("protocol=https") && list.output.contains("protocol=ssh\tport=22\tpath=/repo"), "\(list.output)")
        let removed = try keychain(["remove", "--server", "github.com", "alice"])
        #expect(removed.status == 0 && removed.stderr.contains("removed 2 items"), "\(removed.stderr)")
    }
}
