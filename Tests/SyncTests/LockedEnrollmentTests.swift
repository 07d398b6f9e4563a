import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Enrolling a locked passphrase vault that already holds a synchronizable item: the
/// enrollment meets the locked keys once, unlocks with the passphrase the environment offers
/// and runs again, and that second run must see the vault as it is (not enrolled), not as the
/// rolled-back first run left it. A failed enrollment leaves nothing on etcd.
extension SyncTests {
    /// A machine whose vault has a passphrase and an iCloud item, and is locked; its commands
    /// find the passphrase in `KEYCHAIN_PASSPHRASE_FILE` unless `offered` is false.
    private func lockedMachine(_ name: String, offered: Bool = true) throws -> Machine {
        // The kernel keyring on, as for a user: it keeps the afterFirstUnlock keys between
        // processes, which is what lets an enrollment start before anything is unlocked.
        var machine = Machine(name, cluster, agent: ["KEYCHAIN_SYNC_AGENT": "off", "KEYCHAIN_KERNEL_KEYRING": "on"])
        let passphrase = machine.home.path + "/passphrase"
        try Data("correct horse \(name)\n".utf8).write(to: URL(fileURLWithPath: passphrase))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphrase)
        let passwd = try KeychainExecutable.run(
            ["passwd"], environment: machine.environment.merging(["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]) { $1 }, home: machine.home.path)
        guard passwd.status == 0 else { throw Failure("passwd exited \(passwd.status): \(passwd.stderr)") }
        machine.environment["KEYCHAIN_PASSPHRASE_FILE"] = passphrase
        try machine.ok(["set", "--icloud", "--identifier", "X", "k-\(name)"], input: "s-\(name)")
        // Locked, as the user leaves it: no class key in the kernel keyring.
        try machine.ok(["lock"])
        #expect(try machine.ok(["status"]).contains("available classes: none"))
        if !offered { machine.environment["KEYCHAIN_PASSPHRASE_FILE"] = nil }
        return machine
    }

    private func etcdKeys() throws -> [EtcdClient.KeyValue] {
        let client = try EtcdClient(EtcdClient.Configuration(endpoints: cluster.endpoints.components(separatedBy: ",")))
        let prefix = Array("/kc1/".utf8)
        return try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs
    }

    @Test("sync init on a locked passphrase vault holding an iCloud item enrols it with KEYCHAIN_PASSPHRASE_FILE, and the item travels")
    func lockedVaultWithSynchronizableItemInitialises() throws {
        let alpha = try lockedMachine("alpha")
        defer { _ = try? alpha.keychain(["lock"]) }
        try alpha.initialize()
        let beta = Machine("beta", cluster)
        try beta.join(try alpha.invite())
        try beta.round()
        #expect(try beta.getCloud("k-alpha", valet: "X") == "s-alpha")
    }

    @Test("sync join on a locked passphrase vault holding an iCloud item enrols it with KEYCHAIN_PASSPHRASE_FILE, and the item travels")
    func lockedVaultWithSynchronizableItemJoins() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let beta = try lockedMachine("beta")
        defer { _ = try? beta.keychain(["lock"]) }
        try beta.join(try alpha.invite())
        try alpha.round()
        #expect(try alpha.getCloud("k-beta", valet: "X") == "s-beta")
        let names = (try alpha.status()["devices"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(Set(names ?? []) == ["alpha", "beta"])
    }

    @Test("an init that cannot enrol the vault leaves no group on etcd; a join that cannot leaves no member and the invitation usable")
    func failedEnrollmentLeavesNothingOnEtcd() throws {
        let refused = try lockedMachine("alpha", offered: false)
        defer { _ = try? refused.keychain(["lock"]) }
        let failedInit = try refused.keychain(["sync", "init", "--endpoints", cluster.endpoints, "--name", "alpha"])
        #expect(failedInit.status != 0)
        #expect(try etcdKeys().isEmpty, "a failed init left a group on etcd")
        #expect(try refused.keychain(["sync", "status"]).status != 0, "not enrolled by a failed init")

        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let code = try alpha.invite()
        let listBefore = try etcdKeys().filter { !String(decoding: $0.key, as: UTF8.self).contains("/j/") }.map(\.value)
        let beta = try lockedMachine("beta", offered: false)
        defer { _ = try? beta.keychain(["lock"]) }
        let failedJoin = try beta.keychain(["sync", "join", "--endpoints", cluster.endpoints, "--name", "beta"], input: code + "\n")
        #expect(failedJoin.status != 0)
        let listAfter = try etcdKeys().filter { !String(decoding: $0.key, as: UTF8.self).contains("/j/") }.map(\.value)
        #expect(listAfter == listBefore, "a failed join changed the member list")
        let names = (try alpha.status()["devices"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["alpha"], "a failed join left a member")
        let gamma = Machine("gamma", cluster)
        try gamma.join(code)
    }
}
