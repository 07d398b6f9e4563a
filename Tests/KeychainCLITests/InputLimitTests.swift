import Foundation
import KeychainSystem
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Every input the command and the library read has a limit, and past it the input is refused
/// whole: nothing is stored from a cut copy.
@Suite("Input limits refuse, never cut")
struct InputLimitTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath) }

    @Test("1 MiB of text, a newline and more on standard input is refused and stores nothing; 1 MiB and its newline is stored whole")
    func standardInputOverTheLimit() throws {
        let mebibyte = Data(repeating: UInt8(ascii: "a"), count: 1 << 20)
        let over = try keychain(["set", "-s", "svc", "big"], input: mebibyte + Data("\nmore".utf8))
        #expect(over.status == 2, "\(over.stderr)")
        #expect(over.stderr.contains("limit") && over.stderr.contains("nothing was stored"), "\(over.stderr)")
        #expect(try keychain(["get", "-s", "svc", "big"]).status == 1, "nothing was stored")

        let binary = try keychain(["set", "-s", "svc", "big", "--binary"], input: mebibyte + Data("x".utf8))
        #expect(binary.status != 0, "a binary value one byte over the limit: \(binary.stderr)")

        let exact = try keychain(["set", "-s", "svc", "big"], input: mebibyte + Data("\n".utf8))
        #expect(exact.status == 0, "\(exact.stderr)")
        let read = try keychain(["get", "-s", "svc", "big"])
        #expect(read.stdout.count == (1 << 20) + 1 && read.stdout.dropLast() == mebibyte, "the whole value back")
    }

    @Test("a file read past its limit (archive, key file, passphrase file) is refused, not cut to the limit")
    func fileOverTheLimit() throws {
        let file = directory.file("input", String(repeating: "x", count: 100))
        #expect(try FileSystem.readAll(file, limit: 100).count == 100)
        #expect(throws: Errno.self) { _ = try FileSystem.readAll(file, limit: 99) }
        let passphrase = directory.file("pw", String(repeating: "p", count: PassphraseFile.maximumLength) + "\nmore")
        #expect(throws: StoreError.self) { _ = try PassphraseFile.read(passphrase, what: "the passphrase file") }
    }
}
