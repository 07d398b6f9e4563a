import Foundation
import KeychainTestSupport
import Testing

/// Python's secretstorage (PyPI, over jeepney) against `keychain serve`: both session
/// algorithms, and calls that are wrong on purpose. The interpreter is the one
/// `KEYCHAIN_TEST_PYTHON` names (a virtual environment with secretstorage; .ci/run makes it).
@Suite(
    "keychain serve with Python secretstorage",
    .enabled(if: ServedVault.unavailableReason == nil && PythonClient.unavailableReason == nil, "\(ServedVault.unavailableReason ?? PythonClient.unavailableReason ?? "")"))
struct PythonClientTests {
    @Test("secretstorage stores, searches, reads, changes and deletes an item", arguments: ["plain", "dh"])
    func roundTrip(algorithm: String) throws {
        let served = try ServedVault()
        let result = try PythonClient.run("secretstorage_roundtrip.py", [algorithm], served)
        #expect(result.status == 0 && result.output == "ok\n", "\(result.output)\(result.stderr)\(served.serveErrors)")
    }

    @Test(
        "Python keyring sets, gets, replaces and deletes a password",
        .enabled(if: PythonClient.hasKeyring, "needs keyring in KEYCHAIN_TEST_PYTHON's environment (pip install keyring)"))
    func keyringRoundTrip() throws {
        let served = try ServedVault()
        let result = try PythonClient.run("keyring_roundtrip.py", [], served)
        #expect(result.status == 0 && result.output == "ok\n", "\(result.output)\(result.stderr)\(served.serveErrors)")
    }

    @Test("a session dies with its client, and the session collection keeps items in memory, apart from the vault")
    func sessionLifecycle() throws {
        let served = try ServedVault()
        let result = try PythonClient.run("lifecycle.py", [], served)
        #expect(result.status == 0, "\(result.stderr)\(served.serveErrors)")
        #expect(
            result.output
                == "session-of-a-live-client org.freedesktop.Secret.Error.NoSession\nsession-of-a-gone-client org.freedesktop.Secret.Error.NoSuchObject\n"
                + "session-collection ok\nnot-in-login ok\n", "\(result.output)")
        served.stopServing()
        try served.startServing()
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["search", "kept", "in-memory"]).output.isEmpty, "the session collection outlived the daemon")
    }

    @Test("a daemon killed while a client stores items loses none it acknowledged")
    func killedMidWriteLosesNothingAcknowledged() throws {
        let served = try ServedVault()
        let loop = try Subprocess.launchReadingOutput(
            PythonClient.python, [PythonClient.scripts + "/store_loop.py", "store"], environment: served.environment)
        #expect(Subprocess.readOutput(loop.stdout, until: "stored 30\n"))
        kill(served.servePID, SIGKILL)
        let rest = Subprocess.readAll(loop.stdout)
        close(loop.stdout)
        _ = Subprocess.wait(for: loop.pid)
        _ = served.stopServing()
        // Everything acknowledged before the kill, and what was acknowledged while it landed.
        let acknowledged = (0...30).map(String.init) + rest.split(separator: "\n").compactMap { $0.hasPrefix("stored ") ? String($0.dropFirst(7)) : nil }
        try served.startServing()
        #expect(served.waitForProvider())
        let checked = try PythonClient.run("store_loop.py", ["check"] + acknowledged, served)
        #expect(checked.output == "ok\n", "\(checked.output)\(checked.stderr)")
    }

    @Test("a daemon killed while many clients store items at once loses none it acknowledged to any of them")
    func killedAmidConcurrentWritesLosesNothingAcknowledged() throws {
        let served = try ServedVault()
        let prefixes = ["a", "b", "c", "d", "e", "f"]
        let loops = try prefixes.map { prefix in
            try Subprocess.launchReadingOutput(PythonClient.python, [PythonClient.scripts + "/store_loop.py", "store", prefix], environment: served.environment)
        }
        // Every client is storing when the daemon dies: each has had some stores acknowledged.
        for (prefix, loop) in zip(prefixes, loops) { #expect(Subprocess.readOutput(loop.stdout, until: "stored \(prefix)5\n")) }
        kill(served.servePID, SIGKILL)
        var acknowledged: [String] = []
        for (prefix, loop) in zip(prefixes, loops) {
            let rest = Subprocess.readAll(loop.stdout)
            close(loop.stdout)
            _ = Subprocess.wait(for: loop.pid)
            acknowledged += (0...5).map { "\(prefix)\($0)" } + rest.split(separator: "\n").compactMap { $0.hasPrefix("stored ") ? String($0.dropFirst(7)) : nil }
        }
        _ = served.stopServing()
        try served.startServing()
        #expect(served.waitForProvider())
        let checked = try PythonClient.run("store_loop.py", ["check"] + acknowledged, served)
        #expect(checked.output == "ok\n", "\(checked.output)\(checked.stderr)")
    }

    @Test("CreateCollection makes a collection of the vault that outlives the daemon, and Delete removes it with its items")
    func createAndDeleteCollection() throws {
        let served = try ServedVault()
        let created = try PythonClient.run("created_collections.py", ["create"], served)
        #expect(created.output == "ok\n", "\(created.output)\(created.stderr)")
        served.stopServing()
        try served.startServing()
        #expect(served.waitForProvider())
        let checked = try PythonClient.run("created_collections.py", ["check"], served)
        #expect(checked.output == "ok\n", "\(checked.output)\(checked.stderr)")
        let gone = try PythonClient.run("created_collections.py", ["gone"], served)
        #expect(gone.output == "ok\n", "\(gone.output)\(gone.stderr)")
    }

    /// Each wrong call and the error the specification gives it.
    static let expectedErrors: [(String, String)] = [
        ("search-with-a-string", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("open-session-no-arguments", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("open-session-unknown-algorithm", "org.freedesktop.DBus.Error.NotSupported"),
        ("unknown-method", "org.freedesktop.DBus.Error.UnknownMethod"),
        ("unknown-collection", "org.freedesktop.Secret.Error.NoSuchObject"),
        ("unknown-item", "org.freedesktop.Secret.Error.NoSuchObject"),
        ("path-outside-the-tree", "org.freedesktop.Secret.Error.NoSuchObject"),
        ("dh-public-zero", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-public-one", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-public-p-minus-one", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-public-p", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-public-too-long", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-public-empty", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-public-as-string", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("create-item", "ok"),
        ("get-secret-with-another-clients-session", "org.freedesktop.Secret.Error.NoSession"),
        ("get-secrets-with-another-clients-session", "org.freedesktop.Secret.Error.NoSession"),
        ("close-another-clients-session", "org.freedesktop.Secret.Error.NoSession"),
        ("get-secret-with-no-session", "org.freedesktop.Secret.Error.NoSession"),
        ("set-secret-plain-with-parameters", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("create-item-wrong-signature", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("oversized-secret", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("too-many-attributes", "org.freedesktop.DBus.Error.LimitsExceeded"),
        // As gnome-keyring answers it (GDBus's name for it), which clients match on.
        ("set-read-only-property", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-set-secret-bad-iv", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("dh-set-secret-not-blocks", "org.freedesktop.DBus.Error.InvalidArgs"),
        ("thousands-of-sessions", "ok"),
        ("session-after-closing", "ok"),
        ("still-up", "ok"),
        ("secret-intact", "ok"),
    ]

    @Test(
        "wrong signatures, unknown paths, another client's session, malformed Diffie-Hellman values get their errors, sessions opened in a loop are never refused, and the daemon stays up"
    )
    func badInput() throws {
        let served = try ServedVault()
        let result = try PythonClient.run("bad_input.py", [], served)
        #expect(result.status == 0, "\(result.stderr)\(served.serveErrors)")
        var got: [String: String] = [:]
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { got[String(parts[0])] = String(parts[1]) }
        }
        for (name, error) in Self.expectedErrors {
            #expect(got[name] == error, "\(name)")
        }
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }

    @Test(
        "a seeded stream of random calls (random methods, paths, signatures and values, clients hanging up mid-call) is answered, and leaves the daemon up and a stored secret intact",
        arguments: [1, 2, 3])
    func randomCalls(seed: Int) throws {
        let served = try ServedVault()
        let result = try PythonClient.run("random_calls.py", ["\(seed)", "2000"], served)
        #expect(result.status == 0, "seed \(seed): \(result.stderr)\(served.serveErrors)")
        let lines = Set(result.output.split(separator: "\n").map(String.init))
        #expect(lines.contains("still-up ok") && lines.contains("secret-intact ok"), "seed \(seed): \(result.output)")
        #expect(kill(served.servePID, 0) == 0, "seed \(seed): the daemon stopped")
    }
}

/// The Python interpreter with secretstorage that the client scripts run under.
enum PythonClient {
    static let python = ProcessInfo.processInfo.environment["KEYCHAIN_TEST_PYTHON"] ?? ""

    static let unavailableReason: String? = {
        guard !python.isEmpty, FileManager.default.isExecutableFile(atPath: python) else {
            return "needs KEYCHAIN_TEST_PYTHON naming a Python with secretstorage (python3 -m venv v && v/bin/pip install secretstorage; .ci/run makes one)"
        }
        guard let probe = try? Subprocess.run(python, ["-c", "import secretstorage, jeepney"], environment: ["PATH": "/usr/bin:/bin"]), probe.status == 0 else {
            return "\(python) cannot import secretstorage and jeepney (pip install secretstorage)"
        }
        return nil
    }()

    static let hasKeyring = (try? Subprocess.run(python, ["-c", "import keyring"], environment: ["PATH": "/usr/bin:/bin"]))?.status == 0

    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients").path

    static func run(_ script: String, _ arguments: [String], _ served: ServedVault) throws -> CommandResult {
        try served.run(python, [scripts + "/" + script] + arguments)
    }
}
