import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

@Suite("Files: where the vault lives, its modes, and what is in it")
struct FileTests {
    let directory = TemporaryDirectory()

    func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
    }

    @Test("the default location's directories are made 0700 and every file, the -wal and -shm too, is 0600")
    func fileModes() throws {
        let configuration = VaultConfiguration(
            location: VaultLocation.default(environment: ["XDG_DATA_HOME": directory.path + "/data"]),
            scryptParameters: .minimum, usesKernelKeyring: false)
        let vault = try Vault(configuration)
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
        #expect(mode(directory.path + "/data/keychain") == 0o700)
        #expect(mode(directory.path + "/data") == 0o700)
        for path in [vault.location.path, vault.location.keyFilePath] + vault.location.companionPaths {
            #expect(FileManager.default.fileExists(atPath: path), "\(path) exists while the vault is open")
            #expect(mode(path) == 0o600, "\(path)")
        }
    }

    @Test("the default location follows KEYCHAIN_PATH, then XDG_DATA_HOME, then HOME")
    func defaultLocation() {
        #expect(VaultLocation.default(environment: ["KEYCHAIN_PATH": "/x/y.keychain", "XDG_DATA_HOME": "/d"]).path == "/x/y.keychain")
        #expect(VaultLocation.default(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]).path == "/d/keychain/default.keychain")
        #expect(VaultLocation.default(environment: ["HOME": "/h"]).path == "/h/.local/share/keychain/default.keychain")
        #expect(VaultLocation.default(environment: ["XDG_DATA_HOME": "relative", "HOME": "/h"]).path == "/h/.local/share/keychain/default.keychain")
    }

    @Test("no secret, account, service or label appears in clear anywhere in the vault's files")
    func nothingInClear() throws {
        let configuration = directory.vaultConfiguration()
        let markers = ["SECRET-VALUE-7f3a9", "ACCOUNT-NAME-b2c1", "SERVICE-NAME-d4e5", "LABEL-TEXT-c0ffee", "INTERNET-HOST-9a8b"]
        do {
            let vault = try Vault(configuration)
            try vault.add(
                Item(
                    .genericPassword, attributes: Attributes(service: markers[2], account: markers[1], label: markers[3]),
                    value: secret(markers[0])))
            try vault.add(Item(.internetPassword, attributes: Attributes(account: markers[1], server: markers[4]), value: secret(markers[0])))
            try vault.update(Query(.genericPassword, attributes: Attributes(service: markers[2])), attributes: Attributes(comment: markers[3]), value: secret(markers[0] + "2"))
            try vault.changePassphrase(from: nil, to: secret("pw"))
            for path in [configuration.location.path] + configuration.location.companionPaths {
                try expectAbsent(markers, in: path)
            }
        }
        try expectAbsent(markers, in: configuration.location.path)
    }

    func expectAbsent(_ markers: [String], in path: String) throws {
        guard let bytes = FileManager.default.contents(atPath: path) else { return }
        for marker in markers {
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) found in clear in \(path)")
            #expect(bytes.range(of: Data(marker.utf16.flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] })) == nil)
        }
    }

    @Test("the vault refuses to open when its files are readable by others", arguments: ["", ".key"])
    func refusesOpenFiles(suffix: String) throws {
        let configuration = directory.vaultConfiguration()
        try Vault(configuration).add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: SecretBytes(utf8: "v")))
        chmod(configuration.location.path + suffix, 0o644)
        #expect(throws: StoreError.insecurePermissions(path: configuration.location.path + suffix)) {
            let vault = try Vault(configuration)
            _ = try vault.copyMatching(Query())
        }
    }
}
