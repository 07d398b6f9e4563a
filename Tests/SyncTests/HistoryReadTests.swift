import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

extension SyncTests {
    @Test(
        "a read of a key's history that ends at etcd's progress notification holds every put, those deleted before it began too, as one that waits for a quiet watch does; a key never written has none, and a compacted history cannot tell"
    )
    func historyReadEndsWithEveryPut() throws {
        let client = try EtcdClient(EtcdClient.Configuration(endpoints: cluster.endpoints.components(separatedBy: ",")))
        let base = Array("/history/".utf8)
        let gone = base + Array("gone".utf8)
        let never = base + Array("never".utf8)
        let start = try client.put(gone, Array("first".utf8))
        try client.put(gone, Array("second".utf8))
        try client.delete(gone)
        // Later changes to other keys: the history of `gone` is replayed up to them.
        for n in 0..<20 { try client.put(base + Array("other-\(n)".utf8), [0x61]) }
        for progress in [true, false] {
            let puts = try client.history(of: gone, from: start, through: .max, idleSeconds: 1, progress: progress)
            #expect(puts?.map(\.value) == [Array("first".utf8), Array("second".utf8)], "progress: \(progress)")
            #expect(try client.history(of: never, from: start, through: .max, idleSeconds: 1, progress: progress) == [], "progress: \(progress)")
        }
        try cluster.compact()
        #expect(try client.history(of: gone, from: start, through: .max, idleSeconds: 1) == nil)
    }
}
