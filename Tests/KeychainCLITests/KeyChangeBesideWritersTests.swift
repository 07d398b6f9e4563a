import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// A rekey or a first passphrase runs while other processes write: every write lands, before
/// the rotation (and is re-sealed by it) or after it (under the new keys), and the writers see
/// a rotation as a short wait, never as tampering.
@Suite("Key changes beside other writers", .serialized)
struct KeyChangeBesideWritersTests {
    let directory = TemporaryDirectory()
    var vaultPath: String { directory.vaultPath() }

    var keychain: KeychainCommandLine { KeychainCommandLine(home: directory.path, vault: vaultPath) }

    func start(_ arguments: [String], environment: [String: String]) throws -> pid_t {
        var env = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_DATA_HOME": directory.path + "/data", "KEYCHAIN_KERNEL_KEYRING": "off"]
        env.merge(environment) { $1 }
        return try Subprocess.start(KeychainExecutable.path, [arguments[0], "--vault", vaultPath] + arguments.dropFirst(), environment: env)
    }

    /// One round: `change` starts, and `delay` later another process changes `existing` and
    /// adds a new item; both must be there afterwards, with `verify` clean.
    func race(
        _ change: [String], changeEnvironment: [String: String], writerEnvironment: [String: String], delays: [Double]
    ) throws {
        for (round, delay) in delays.enumerated() {
            let pid = try start(change, environment: changeEnvironment)
            Thread.sleep(forTimeInterval: delay)
            let update = try keychain(["set", "-s", "svc", "existing"], input: "v\(round)", environment: writerEnvironment)
            let add = try keychain(["set", "-s", "svc", "added-\(round)"], input: "new-\(round)", environment: writerEnvironment)
            let status = Subprocess.wait(for: pid)
            #expect(status == 0, "\(change[0]) at \(delay) s exited \(status)")
            for write in [update, add] {
                #expect(write.status == 0, "a write \(delay) s into \(change[0]) failed: \(write.stderr)")
                #expect(!write.stderr.contains("verification") && !write.stderr.contains("authentication"), "\(write.stderr)")
            }
            let existing = try keychain(["get", "-s", "svc", "existing"], environment: writerEnvironment)
            #expect(existing.output == "v\(round)\n", "the update \(delay) s into \(change[0]) was lost: \(existing.output)\(existing.stderr)")
            let added = try keychain(["get", "-s", "svc", "added-\(round)"], environment: writerEnvironment)
            #expect(added.output == "new-\(round)\n", "the item added \(delay) s into \(change[0]) was lost: \(added.stderr)")
            let verify = try keychain(["verify"], environment: writerEnvironment)
            #expect(verify.status == 0, "verify after a write \(delay) s into \(change[0]): \(verify.output)\(verify.stderr)")
        }
        let listed = try keychain(["list", "-s", "svc"], environment: writerEnvironment)
        for round in delays.indices { #expect(listed.output.contains("added-\(round)"), "added-\(round) lost later: \(listed.output)") }
    }

    /// The delays swept: across the rekey's two key derivations and its transaction.
    static let delays = stride(from: 0.0, through: 1.25, by: 0.25).map { $0 }

    @Test("writers that unlock from a passphrase file lose nothing to a rekey running beside them, at any moment of it")
    func rekeyBesideWritersWithPassphrase() throws {
        let passphrase = directory.file("pw", "correct horse")
        #expect(try keychain(["set", "-s", "svc", "existing"], input: "v-start").status == 0)
        #expect(try keychain(["passwd"], environment: ["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]).status == 0)
        let withPassphrase = ["KEYCHAIN_PASSPHRASE_FILE": passphrase]
        try race(["rekey"], changeEnvironment: withPassphrase, writerEnvironment: withPassphrase, delays: Self.delays)
    }

    @Test("writers that rely on `keychain unlock` (the kernel keyring) wait for the rekey's new keys instead of failing or sealing with old ones")
    func rekeyBesideUnlockedWriters() throws {
        let passphrase = directory.file("pw", "correct horse")
        let keyring = ["KEYCHAIN_KERNEL_KEYRING": "on"]
        #expect(try keychain(["set", "-s", "svc", "existing"], input: "v-start", environment: keyring).status == 0)
        #expect(try keychain(["passwd"], environment: keyring.merging(["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]) { $1 }).status == 0)
        #expect(try keychain(["unlock"], environment: keyring.merging(["KEYCHAIN_PASSPHRASE_FILE": passphrase]) { $1 }).status == 0)
        defer { _ = try? keychain(["lock"], environment: keyring) }
        try race(
            ["rekey"], changeEnvironment: keyring.merging(["KEYCHAIN_PASSPHRASE_FILE": passphrase]) { $1 }, writerEnvironment: keyring,
            delays: Self.delays)
    }

    @Test("a key-file vault's first passphrase (a rotation too) loses nothing a writer adds while it runs")
    func firstPassphraseBesideWriters() throws {
        let passphrase = directory.file("pw", "correct horse")
        for (round, delay) in [0.05, 0.3, 0.5, 0.7].enumerated() {
            let path = directory.vaultPath("first-\(round).keychain")
            let vault = ["--vault", path]
            #expect(try KeychainExecutable.run(["set", "-s", "svc", "existing"] + vault, input: Data("v-start".utf8), home: directory.path).status == 0)
            var env = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_DATA_HOME": directory.path + "/data", "KEYCHAIN_KERNEL_KEYRING": "off"]
            env["KEYCHAIN_NEW_PASSPHRASE_FILE"] = passphrase
            let pid = try Subprocess.start(KeychainExecutable.path, ["passwd"] + vault, environment: env)
            Thread.sleep(forTimeInterval: delay)
            let withPassphrase = ["KEYCHAIN_PASSPHRASE_FILE": passphrase]
            let add = try KeychainExecutable.run(["set", "-s", "svc", "added"] + vault, input: Data("new".utf8), environment: withPassphrase, home: directory.path)
            #expect(Subprocess.wait(for: pid) == 0)
            #expect(add.status == 0, "\(add.stderr)")
            let read = try KeychainExecutable.run(["get", "-s", "svc", "added"] + vault, environment: withPassphrase, home: directory.path)
            #expect(read.output == "new\n", "the write \(delay) s into passwd: \(read.stderr)")
            let verify = try KeychainExecutable.run(["verify"] + vault, environment: withPassphrase, home: directory.path)
            #expect(verify.status == 0, "\(verify.output)\(verify.stderr)")
        }
    }

    @Test(
        "a rekey that fails (the file-size limit) leaves the user's cached keys as they were: other processes read on; a planted ':unlocked' key does not make a rekey publish the whenUnlocked keys"
    )
    func failedOrFooledRekeyPublishesNothing() throws {
        let passphrase = directory.file("pw", "correct horse")
        let keyring = ["KEYCHAIN_KERNEL_KEYRING": "on"]
        let withPassphrase = keyring.merging(["KEYCHAIN_PASSPHRASE_FILE": passphrase]) { $1 }
        let value = String(repeating: "v", count: 1_000)
        for index in 0..<40 {
            #expect(try keychain(["set", "-s", "svc", "afu-\(index)", "--accessibility", "afterFirstUnlock"], input: value, environment: keyring).status == 0)
        }
        #expect(try keychain(["set", "-s", "svc", "wu"], input: "when unlocked", environment: keyring).status == 0)
        #expect(try keychain(["passwd"], environment: keyring.merging(["KEYCHAIN_NEW_PASSPHRASE_FILE": passphrase]) { $1 }).status == 0)
        #expect(try keychain(["unlock", "--timeout", "0"], environment: withPassphrase).status == 0, "afterFirstUnlock keys cached, whenUnlocked not shared")
        defer { _ = try? keychain(["lock"], environment: keyring) }

        // TMPDIR names no directory: a sanitizer's runtime writes a file there as it starts,
        // larger than the limit, which would cut it, and the program would die of that before
        // its rekey.
        var env = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_DATA_HOME": directory.path + "/data", "TMPDIR": directory.path + "/absent"]
        env.merge(withPassphrase) { $1 }
        let limited = try Subprocess.run(
            "/bin/bash", ["-c", "ulimit -f 40; exec \"$0\" rekey --vault \"$1\"", KeychainExecutable.path, vaultPath], environment: env)
        #expect(
            limited.status == 128 + SIGXFSZ || (1..<128).contains(limited.status) && limited.stderr.contains("file-size limit"),
            "the limit stops the rekey as it writes its transaction: \(limited.status) \(limited.stderr)")
        let read = try keychain(["get", "-s", "svc", "afu-3"], environment: keyring)
        #expect(read.status == 0 && read.output == value + "\n", "another process still reads from the cache: \(read.stderr)")

        // A key any process of the user may add under the user-unlock name, with junk in it.
        let opened = try VaultEngine(VaultConfiguration(location: VaultLocation(path: vaultPath), usesKernelKeyring: true))
        try KernelKeyring().store(SecretBytes(utf8: String(repeating: "junk", count: 20)), as: opened.locked { $0.unlockedDescription }, timeout: 300)
        #expect(try keychain(["rekey"], environment: withPassphrase).status == 0)
        let fooled = try keychain(["get", "-s", "svc", "wu"], environment: keyring)
        #expect(fooled.status == 3, "the whenUnlocked item stays locked for other processes: \(fooled.output)\(fooled.stderr)")
    }
}
