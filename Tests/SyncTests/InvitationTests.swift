import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// The invitation code opens the group's keys, so it never comes
/// from the command line, and an invitation expires by what is sealed inside it, not by what
/// etcd chooses to keep.
extension SyncTests {
    @Test("a code on join's command line is refused, saying how to give it; from standard input or --code-file it joins")
    func invitationCodeNeverFromArguments() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let code = try alpha.invite()
        let beta = Machine("beta", cluster)
        let inArguments = try beta.keychain(["sync", "join", code, "--endpoints", cluster.endpoints])
        #expect(inArguments.status == 2 && inArguments.stderr.contains("--code-file"), "\(inArguments.stderr)")
        #expect(!inArguments.stderr.contains(code) && !inArguments.output.contains(code))
        #expect(try beta.keychain(["sync", "status"]).status != 0, "not enrolled by a refused join")
        let file = beta.home.path + "/code.txt"
        try Data((code + "\n").utf8).write(to: URL(fileURLWithPath: file))
        try beta.ok(["sync", "join", "--endpoints", cluster.endpoints, "--name", "beta", "--code-file", file])
        let gamma = Machine("gamma", cluster)
        try gamma.join(try alpha.invite())
        let names = (try alpha.status()["devices"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(Set(names ?? []) == ["alpha", "beta", "gamma"])
    }

    @Test("an expired invitation is refused by the joining device while etcd still serves it")
    func expiredInvitationRefused() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let client = try EtcdClient(EtcdClient.Configuration(endpoints: cluster.endpoints.components(separatedBy: ",")))
        let prefix = Array("/kc1/".utf8)
        func invitations() throws -> [EtcdClient.KeyValue] {
            try client.range(prefix, rangeEnd: EtcdClient.rangeEnd(ofPrefix: prefix)).kvs.filter { String(decoding: $0.key, as: UTF8.self).contains("/j/") }
        }
        let code = try alpha.ok(["sync", "invite", "--valid-for", "1"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let served = try invitations()
        #expect(served.count == 1)
        usleep(1_500_000)
        // A hostile etcd keeps it for good: put back with no lease.
        for kv in served { try client.put(kv.key, kv.value) }
        let beta = Machine("beta", cluster)
        let expired = try beta.keychain(["sync", "join", "--endpoints", cluster.endpoints], input: code)
        #expect(expired.status == 4 && expired.stderr.contains("expired"), "\(expired.stderr)")
        #expect(try invitations().count == 1, "etcd still serves it")
        #expect(try beta.keychain(["sync", "status"]).status != 0, "not enrolled")
    }

    @Test("a code typed loosely (lower case, spaces for dashes) joins; a mistyped one is called a typo and uses nothing up; a used one is called used, with its letters right")
    func forgivingCodesOnTheCommandLine() throws {
        let alpha = Machine("alpha", cluster)
        try alpha.initialize()
        let code = try alpha.invite()
        let beta = Machine("beta", cluster)
        try beta.join(code.lowercased().replacing("-", with: " "))

        let next = try alpha.invite()
        var letters = Array(next)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        // A letter changed so that the check letters catch it (all but about one in a million do).
        for replacement in alphabet where replacement != letters[20] {
            var candidate = letters
            candidate[20] = replacement
            if (try? InvitationCode(parsing: String(candidate))) == nil {
                letters = candidate
                break
            }
        }
        let gamma = Machine("gamma", cluster)
        let typo = try gamma.keychain(["sync", "join", "--endpoints", cluster.endpoints], input: String(letters))
        #expect(typo.status == 2 && typo.stderr.contains("mistyped"), "\(typo.stderr)")
        let used = try gamma.keychain(["sync", "join", "--endpoints", cluster.endpoints], input: code)
        #expect(used.status == 4 && used.stderr.contains("check letters match") && used.stderr.contains("it was used"), "\(used.stderr)")
        try gamma.join(next)
    }
}
