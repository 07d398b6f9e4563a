import Foundation
import KeychainTestSupport
import Testing

/// `keychain sync status` says what waits in the outbox and why: by item and by change, the
/// items a locked vault cannot seal apart from those another cause holds.
extension SyncTests {
    @Test(
        "sync status names what waits in the outbox and why: the item whose secret the locked class keeps apart from the one the unreachable cluster holds, in words and in --json"
    )
    func statusNamesWhatWaits() throws {
        // The kernel keyring on, as for a user: it keeps the afterFirstUnlock key between
        // processes once the unlock's whenUnlocked time is over.
        var alpha = Machine("alpha", cluster, agent: ["KEYCHAIN_SYNC_AGENT": "off", "KEYCHAIN_KERNEL_KEYRING": "on"])
        let passphrase = alpha.home.path + "/passphrase"
        try Data("correct horse outbox\n".utf8).write(to: URL(fileURLWithPath: passphrase))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphrase)
        let passwd = try KeychainExecutable.run(
            ["passwd"], environment: alpha.environment.merging(["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]) { $1 }, home: alpha.home.path)
        guard passwd.status == 0 else { throw Failure("passwd exited \(passwd.status): \(passwd.stderr)") }
        alpha.environment["KEYCHAIN_PASSPHRASE_FILE"] = passphrase
        defer { _ = try? alpha.keychain(["lock"]) }
        try alpha.initialize()

        for member in 1...3 { try cluster.kill(member) }
        defer { for member in 1...3 { try? cluster.restart(member) } }
        try alpha.ok(["set", "--icloud", "-i", "Outbox", "--accessibility", "whenUnlocked", "sealed-later"], input: "needs the unlock")
        try alpha.ok(["set", "--icloud", "-i", "Outbox", "--accessibility", "afterFirstUnlock", "sealed-now"], input: "needs the cluster")
        // Unlocked for a second: then the whenUnlocked class closes, afterFirstUnlock stays open.
        try alpha.ok(["unlock", "--timeout", "1"])
        alpha.environment["KEYCHAIN_PASSPHRASE_FILE"] = nil
        usleep(2_000_000)

        let text = try alpha.ok(["sync", "status"])
        #expect(text.contains("outbox:        2 changes of 2 items"), "\(text)")
        #expect(text.contains("1 item waits (1 change): locked (their secrets need the vault unlocked to be sealed"), "\(text)")
        #expect(text.contains("1 item waits (1 change): unreachable (the cluster does not answer"), "\(text)")
        let status = try alpha.status()
        #expect(status["outbox"] as? Int == 2 && status["outboxItems"] as? Int == 2, "\(status)")
        let waits = status["outboxWaits"] as? [[String: Any]] ?? []
        #expect(waits.map { $0["reason"] as? String } == ["locked", "unreachable"], "\(waits)")
        #expect(waits.map { $0["items"] as? Int } == [1, 1], "\(waits)")

        // With the vault open, nothing waits for an unlock: both items wait for the cluster.
        alpha.environment["KEYCHAIN_PASSPHRASE_FILE"] = passphrase
        try alpha.ok(["unlock"])
        let open = try alpha.status()
        let reasons = (open["outboxWaits"] as? [[String: Any]] ?? []).map { "\($0["reason"] ?? "")/\($0["items"] ?? "")" }
        #expect(reasons == ["unreachable/2"], "\(open)")
    }
}
