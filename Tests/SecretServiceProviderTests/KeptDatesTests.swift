import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

@testable import KeychainServe

#if canImport(Glibc)
    import Glibc
#endif

/// An item's `Created` and `Modified` come into the vault as its old provider showed them.
@Suite(
    "migrate --foreign keeps an item's dates",
    .enabled(if: PrivateSecretService.unavailableReason == nil, "\(PrivateSecretService.unavailableReason ?? "")"),
    .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct KeptDatesTests {
    @Test("a record with kept dates round-trips, and every cut or lengthened copy of it is refused")
    func recordWithDates() {
        let dates = ItemRecordCoding.KeptDates(created: 1_700_000_000, modified: 1_700_000_123)
        let encoded = ItemRecordCoding.encode(attributes: ["user": "ci"], contentType: "text/plain", dates: dates)
        #expect(ItemRecordCoding.decode(encoded)?.dates == dates)
        #expect(ItemRecordCoding.decode(encoded)?.attributes == ["user": "ci"])
        #expect(ItemRecordCoding.decode(ItemRecordCoding.encode(attributes: [:], contentType: "text/plain"))?.dates == nil)
        let bytes = [UInt8](encoded)
        for length in 0..<bytes.count { #expect(ItemRecordCoding.decode(Data(bytes[0..<length])) == nil, "cut at \(length)") }
        #expect(ItemRecordCoding.decode(Data(bytes + [0])) == nil)
    }

    /// The `created` and `modified` lines `secret-tool search` prints for the item it finds by `attributes`.
    static func dates(_ attributes: [String], _ environment: [String: String]) throws -> [String] {
        let found = try Subprocess.run("/usr/bin/secret-tool", ["search"] + attributes, environment: environment)
        return found.output.split(separator: "\n").filter { $0.hasPrefix("created = ") || $0.hasPrefix("modified = ") }.map(String.init)
    }

    @Test("Created and Modified of gnome-keyring's item are what keychain serve shows after the move, not the move's time")
    func datesComeAcross() throws {
        let setup = try ProviderSwitchTests.Switch()
        try setup.store("dated", ["service", "dated"], secret: "s")
        // secret-tool prints local time: UTC here, to compare with keychain list's ISO 8601.
        let before = try Self.dates(["service", "dated"], setup.environment.merging(["TZ": "UTC"]) { $1 })
        #expect(before.count == 2, "\(before)")
        // Dates are in seconds: the move comes later than the store by more than one.
        usleep(2_100_000)
        #expect(try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault"]).status == 0)
        try setup.served.startServing()
        #expect(setup.served.waitForProvider())
        #expect(try Self.dates(["service", "dated"], setup.served.environment.merging(["TZ": "UTC"]) { $1 }) == before)
        // keychain list shows the same dates.
        let listed = try setup.served.run(KeychainExecutable.path, ["list", "--json"]).output
        for line in before {
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3 else { continue }
            let iso = parts[2].replacingOccurrences(of: " ", with: "T") + "Z"
            #expect(listed.contains("\"\(parts[0])\":\"\(iso)\""), "\(line) \(listed)")
        }
    }
}
