import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

@Suite("Concurrency: threads and processes writing one vault lose no update")
struct ConcurrencyTests {
    let directory = TemporaryDirectory()

    @Test("8 threads, each upserting its own keys and a shared counter item, lose nothing")
    func threadsLoseNoUpdate() throws {
        let vault = try Vault(directory.vaultConfiguration())
        let threads = 8, perThread = 40
        let errors = Collector<Error>()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                do {
                    try vault.upsert(Item(.genericPassword, attributes: Attributes(service: "t", account: "\(thread)-\(index)"), value: secret("\(thread):\(index)")))
                    try vault.upsert(Item(.genericPassword, attributes: Attributes(service: "shared", account: "last-\(thread)"), value: secret("\(index)")))
                } catch {
                    errors.add(error)
                }
            }
        }
        #expect(errors.all.isEmpty, "\(errors.all)")
        let items = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "t"), returnData: true))
        #expect(items.count == threads * perThread)
        for item in items {
            let parts = item.attributes.account!.split(separator: "-")
            #expect(item.value?.string == "\(parts[0]):\(parts[1])")
        }
        for thread in 0..<threads {
            let last = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "shared", account: "last-\(thread)"), returnData: true))
            #expect(last.first?.value?.string == "\(perThread - 1)")
        }
    }

    @Test("6 processes writing one vault at once lose no update, and none sees 'database is locked'")
    func processesLoseNoUpdate() async throws {
        let configuration = directory.vaultConfiguration()
        _ = try Vault(configuration)
        let processes = 6, perProcess = 15
        let path = configuration.location.path
        let home = directory.path
        let results = try await withThrowingTaskGroup(of: [CommandResult].self) { group in
            for process in 0..<processes {
                group.addTask {
                    try (0..<perProcess).map { index in
                        try KeychainExecutable.run(
                            ["set", "--vault", path, "--service", "p", "\(process)-\(index)"],
                            input: Data("value-\(process)-\(index)".utf8), home: home)
                    }
                }
            }
            var all: [CommandResult] = []
            for try await batch in group { all += batch }
            return all
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.filter { $0.status != 0 }.map(\.stderr))")
        let vault = try Vault(configuration)
        let items = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "p"), returnData: true))
        #expect(items.count == processes * perProcess)
        #expect(items.allSatisfy { $0.value?.string == "value-" + $0.attributes.account! })
    }
}
