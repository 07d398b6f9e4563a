import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// Another program deleting items while a listing runs: the listing sees the collection as it
/// is or was, never an error (libsecret fails a whole search when one item it listed is gone
/// by the time it loads it).
@Suite(
    "A listing survives items deleted under it",
    .enabled(if: SecretServiceEnvironment.isAvailable, "needs a Secret Service (\(SecretServiceEnvironment.unavailableReason ?? ""))"))
struct VanishingItemsTests {
    @Test("listings of a service while another store adds and deletes its items: no error, only items that were there")
    func listingWhileDeleting() throws {
        let test = try TestStore(.secretService)
        let store = test.store
        let service = "vanishing-\(UUID().uuidString)"
        for index in 0..<20 {
            try store.add(Item(.genericPassword, attributes: Attributes(service: service, account: "kept-\(index)"), value: SecretBytes(utf8: "v")))
        }
        // The other program: its own connection to the same collection and partition.
        let other = try SecretServiceStore(.init(timeout: .seconds(10), partition: test.partition))
        let stop = Flag()
        let churn = Thread {
            var round = 0
            while !stop.isSet {
                let attributes = Attributes(service: service, account: "churn-\(round % 8)")
                _ = try? other.add(Item(.genericPassword, attributes: attributes, value: SecretBytes(utf8: "c")))
                _ = try? other.delete(Query(.genericPassword, attributes: attributes))
                round += 1
            }
        }
        churn.start()
        defer { stop.set() }
        var failures: [String] = []
        for _ in 0..<60 {
            do {
                let accounts = try store.copyMatching(Query(.genericPassword, attributes: Attributes(service: service))).compactMap(\.attributes.account)
                if accounts.filter({ $0.hasPrefix("kept-") }).count != 20 { failures.append("a kept item was missing: \(accounts.count)") }
            } catch {
                failures.append("\(error)")
            }
        }
        stop.set()
        #expect(failures.isEmpty, "\(failures.count) of 60 listings failed, first: \(failures.first ?? "")")
    }
}

/// A flag one thread sets and another polls.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
