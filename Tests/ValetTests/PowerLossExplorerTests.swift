import Foundation
import KeychainTestSupport
import Testing

/// The power-loss explorer of `keychain-reliability` (strace on the real `keychain`,
/// every crash state of a persistence model written out and checked) catches a wrong order of
/// file-system calls, and the creation of a vault keeps what it acknowledged under each model.
@Suite(
    "Power-loss crash states of the keychain command",
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (apt-get install strace)"))
struct PowerLossExplorerTests {
    /// Runs `keychain-reliability --power-loss --quick --every-state` on `operations` (the
    /// creation of a vault unless told) with `arguments` added, its scratch files in a temporary
    /// directory of the test's own.
    private func explore(_ arguments: [String], operations: String = "creation", everyState: Bool = true) throws -> CommandResult {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("power-loss-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let result = try Subprocess.run(
            KeychainExecutable.reliabilityPath, ["--power-loss", "--quick", "--seed", "37", "--operations", operations] + (everyState ? ["--every-state"] : []) + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch])
        // The program's own scratch directory is gone too, whether the checks held or failed.
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch)
        #expect(left.isEmpty, "keychain-reliability left \(left) behind")
        return result
    }

    @Test("the vault linked into place before its key file is caught: a state with the vault and no key file")
    func vaultLinkedBeforeKeyFileIsCaught() throws {
        let result = try explore(["--models", "ordered", "--fault", "vault-before-key"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("ordered model"), "\(result.output)")
        #expect(result.output.contains("default.keychain.key is missing"), "\(result.output)")
    }

    @Test("a trace without its directory fsyncs is caught: the acknowledged vault is gone once only synced calls survive")
    func missingDirectorySyncIsCaught() throws {
        let result = try explore(["--models", "strict", "--fault", "no-directory-sync"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("is no vault once the command had succeeded"), "\(result.output)")
    }

    /// The failing state the strict model found: the vault and its key file linked and their
    /// directory synced, but `~/.local/share/keychain` itself (and its parents) never synced into
    /// their own parents, so that after the cut the whole directory, vault included, was gone.
    @Test("a created vault, its directories included, survives when only what was synced survives, and under the two other models")
    func createdVaultSurvivesEveryModel() throws {
        let result = try explore(["--models", "strict,ordered,loose"])
        #expect(result.status == 0, "\(result.output)")
        for model in ["ordered", "strict", "loose"] {
            let figure = #"\#(model) [0-9]+ states \([0-9]+ distinct[^)]*\), 0 failed"#
            #expect(result.output.range(of: figure, options: .regularExpression) != nil, "\(model): \(result.output)")
        }
    }

    /// The failing states the ordered model found: a restore (or a backup) linked the key file
    /// into place first and only then copied the vault, so that a cut in between (a power cut,
    /// or a kill) left a key file alone, with no finished vault under a temporary name for the
    /// next write to link ("a key file without its vault").
    @Test("a restore and a backup cut at any point leave the vault and its key file together, or neither")
    func restoreAndBackupNeverLeaveAKeyFileAlone() throws {
        let result = try explore(["--models", "ordered,strict"], operations: "restore,backup")
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("key file without its vault"), "\(result.output)")
        #expect(result.output.contains("restore:") && result.output.contains("backup:"), "\(result.output)")
    }

    /// The failing state the explorer found once it looked past the vaults: a new file (an
    /// archive, a key file) was linked into place and its directory synced, and only then was
    /// its temporary name removed, so that after a cut the file kept a second name
    /// (`items.skcx.new-...`) that no process ever removes.
    @Test("an export cut at any point leaves its archive whole or absent, and no file under a temporary name once it exited")
    func exportLeavesAWholeArchiveAndNoTemporaryName() throws {
        let result = try explore(["--models", "ordered,strict"], operations: "export")
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("temporary name"), "\(result.output)")
        let figure = #"export: [0-9]+ calls traced; ordered [0-9]+ states \([0-9]+ distinct[^)]*\), 0 failed"#
        #expect(result.output.range(of: figure, options: .regularExpression) != nil, "\(result.output)")
    }

    @Test(
        "keychain serve's CreateItem and Delete, a migrate either way and migrate --foreign's one plan keep what they acknowledged, cut at any point",
        .enabled(if: ServedVault.unavailableReason == nil, "needs dbus-daemon and secret-tool (apt-get install dbus libsecret-tools)"))
    func secretServiceWritesSurviveEveryModel() throws {
        let result = try explore(["--models", "ordered,strict"], operations: "serve,migrate", everyState: false)
        #expect(result.status == 0, "\(result.output)")
        for operation in [
            "serve (CreateItem by secret-tool)", "serve (Delete by secret-tool clear)", "migrate (into the vault)", "migrate (out of the vault)",
            "migrate --foreign (into the vault)",
        ] {
            #expect(result.output.contains(operation + ": "), "\(operation): \(result.output)")
        }
        #expect(!result.output.contains("skipped"), "\(result.output)")
    }
}
