import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// etcd's numbers are untrusted input: a revision out of range is refused where it is parsed,
/// and a cursor an earlier version stored from a hostile answer no longer stops sync.
@Suite("etcd's revisions as untrusted input")
struct HostileNumberTests {
    @Test("a header, key or watch revision of Int64.max, a negative one or a non-number is refused as malformed")
    func outOfRangeRevisionsAreRefused() throws {
        for text in ["9223372036854775807", "-1", "281474976710657", "12x"] {
            #expect(throws: SyncError.self) { try EtcdJSON.Header(revision: text).number() }
            let key = EtcdJSON.KeyValue(key: "a2V5", value: "", mod_revision: text, create_revision: "1")
            #expect(throws: SyncError.self) { try EtcdJSON.keyValues([key]) }
        }
        #expect(try EtcdJSON.Header(revision: "42").number() == 42)
    }

    @Test("a revision far ahead of the cursor is refused; the next revision and the refused tally saturate instead of trapping")
    func arithmeticSaturates() throws {
        #expect(throws: SyncError.self) { try EtcdRevision.check(EtcdRevision.maximumJump + 11, after: 10) }
        try EtcdRevision.check(EtcdRevision.maximumJump + 10, after: 10)
        try EtcdRevision.check(500, after: 0)
        #expect(EtcdRevision.after(.max) == EtcdRevision.ceiling + 1)
        #expect(EtcdRevision.after(-5) == 1)
        #expect(EtcdRevision.tally(.max - 1, adding: 10) == .max)
        #expect(EtcdRevision.tally(3, adding: .max) == .max)
    }
}

extension SyncTests {
    @Test("a device whose cursor a hostile answer left at Int64.max syncs again: the next round reads everything afresh")
    func poisonedCursorRecovers() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault(directory.vaultConfiguration())
        let engine = try SyncEngine.create(vault: vault, cluster: SyncCluster(endpoints: cluster.endpoints.components(separatedBy: ",")), deviceName: "alpha")
        let beta = Machine("beta", cluster)
        try beta.join(try engine.invite())
        try beta.setCloud("token", "after-the-hostile-answer")
        try beta.round()
        var state = try engine.state()
        state.cursor = .max
        try engine.save(state)
        let round = try engine.syncOnce()
        #expect(round.received == 1)
        #expect(try engine.state().cursor < Int64.max)
        let again = try engine.syncOnce()
        #expect(again.received == 0 && again.refused == 0)
    }
}
