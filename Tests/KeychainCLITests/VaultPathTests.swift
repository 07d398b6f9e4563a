import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// Only the default location is created. A mistyped
/// `--vault`, `KEYCHAIN_PATH` or ``VaultConfiguration`` path is an error naming the missing
/// directory, and a path ending in a slash is refused, never made into a file of that name.
@Suite("Only the default vault's directory is created; a mistyped path is an error that names it")
struct VaultPathTests {
    let directory = TemporaryDirectory()

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path) }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test("the command: set with --vault or KEYCHAIN_PATH in a missing directory exits 2, names it, creates nothing")
    func commandMissingDirectory() throws {
        let missing = directory.path + "/nonexistent/dir"
        for (arguments, environment) in [
            (["set", "-s", "x", "-a", "y", "--vault", missing + "/v.keychain"], [String: String]()),
            (["set", "-s", "x", "-a", "y"], ["KEYCHAIN_PATH": missing + "/v.keychain"]),
        ] {
            let result = try keychain(arguments, input: "v", environment: environment)
            #expect(result.status == 2 && result.stderr.contains(missing), "\(environment): \(result.status) \(result.stderr)")
            #expect(!exists(directory.path + "/nonexistent"), "nothing was created")
        }
    }

    @Test("the command: KEYCHAIN_PATH or --vault ending in a slash is refused; no file of that name appears")
    func commandTrailingSlash() throws {
        for (arguments, environment) in [
            (["set", "-s", "x", "-a", "y"], ["KEYCHAIN_PATH": directory.path + "/new/"]),
            (["set", "-s", "x", "-a", "y", "--vault", directory.path + "/new/"], [:]),
            (["get", "-s", "x", "y"], ["KEYCHAIN_PATH": directory.path + "/new/"]),
        ] {
            let result = try keychain(arguments, input: "v", environment: environment)
            #expect(result.status == 2 && result.stderr.contains("ends in a slash"), "\(arguments) \(environment): \(result.status) \(result.stderr)")
            #expect(!exists(directory.path + "/new"), "no file named new")
        }
    }

    @Test("the command: the default location's directory is created, 0700")
    func commandDefaultCreated() throws {
        let result = try keychain(["set", "-s", "x", "-a", "y"], input: "v", environment: ["XDG_DATA_HOME": directory.path + "/data"])
        #expect(result.status == 0, "\(result.stderr)")
        var info = stat()
        #expect(stat(directory.path + "/data/keychain", &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(exists(directory.path + "/data/keychain/default.keychain"))
    }

    @Test("the library: a configuration in a missing directory, or ending in a slash, is refused and creates nothing")
    func library() throws {
        let missing = directory.path + "/nonexistent/dir"
        let item = Item(.genericPassword, attributes: Attributes(service: "x", account: "y"), value: SecretBytes(utf8: "v"))
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: missing + "/v.keychain"), usesKernelKeyring: false))
        do {
            try vault.add(item)
            Issue.record("a vault was created in a missing directory")
        } catch {
            guard case .invalidArgument(let why) = error, why.contains(missing) else { Issue.record("\(error)"); return }
        }
        #expect(!exists(directory.path + "/nonexistent"))
        #expect(throws: StoreError.self) {
            try Vault(VaultConfiguration(location: VaultLocation(path: directory.path + "/new/"), usesKernelKeyring: false)).add(item)
        }
        #expect(!exists(directory.path + "/new"))
    }
}
