import Foundation
import KeychainTestSupport
import Testing

/// Aliases are kept in the vault: `ReadAlias` after a restart answers as before it.
@Suite(
    "keychain serve keeps aliases across restarts",
    .enabled(if: ServedVault.unavailableReason == nil && PythonClient.unavailableReason == nil, "\(ServedVault.unavailableReason ?? PythonClient.unavailableReason ?? "")"))
struct AliasTests {
    @Test("SetAlias (default included) survives a restart, a removed alias stays removed, and an alias of a deleted collection is dropped")
    func aliasesSurviveRestarts() throws {
        let served = try ServedVault()
        for step in ["set", "check", "gone"] {
            let result = try PythonClient.run("aliases.py", [step], served)
            #expect(result.status == 0 && result.output == "ok\n", "\(step): \(result.output)\(result.stderr)\(served.serveErrors)")
            served.stopServing()
            try served.startServing()
            #expect(served.waitForProvider())
        }
    }

    @Test("secret-tool stores into the collection a kept default alias names, after a restart")
    func keptDefaultAliasIsWhereClientsStore() throws {
        let served = try ServedVault()
        #expect(try PythonClient.run("aliases.py", ["set"], served).output == "ok\n")
        served.stopServing()
        try served.startServing()
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "aliased"], input: "in-work").status == 0)
        let stored = try PythonClient.run("aliases.py", ["stored"], served)
        #expect(stored.output == "ok\n", "\(stored.output)\(stored.stderr)")
    }
}
