import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One lock state for the user: `keychain lock` and `Service.Lock` are one act, which reaches
/// every process at once, a running `keychain serve` too (however it unlocked); `keychain
/// unlock` before `keychain serve` is an unlock the daemon serves.
@Suite(
    "One lock state, everywhere, at once", .serialized, .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct OneLockStateTests {
    /// The kernel keyring on, as on a user's machine (ServedVault keeps it off by default).
    static let keyring = ["KEYCHAIN_KERNEL_KEYRING": "on"]

    /// A passphrase vault made from nothing (as `keychain passwd` makes one), and its passphrase file.
    static func freshPassphraseVault(_ served: ServedVault) throws -> String {
        let file = served.directory.file("passphrase", "pass-phrase-1")
        let made = try keychain(served, ["passwd"], ["KEYCHAIN_NEW_PASSPHRASE_FILE": file])
        #expect(made.status == 0, "\(made.stderr)")
        return file
    }

    static func keychain(_ served: ServedVault, _ arguments: [String], _ extra: [String: String] = [:]) throws -> CommandResult {
        try Subprocess.run(KeychainExecutable.path, arguments, environment: served.environment.merging(keyring.merging(extra) { $1 }) { $1 })
    }

    static func lookup(_ served: ServedVault) throws -> CommandResult {
        try served.run("/usr/bin/secret-tool", ["lookup", "service", "x"])
    }

    @Test("after keychain lock returns, a serve started with KEYCHAIN_PASSPHRASE_FILE hands out no secret")
    func lockReachesAServeWithItsOwnPassphrase() throws {
        let served = try ServedVault(serving: false)
        let file = try Self.freshPassphraseVault(served)
        try served.startServing(environment: Self.keyring.merging(["KEYCHAIN_PASSPHRASE_FILE": file]) { $1 })
        #expect(served.waitForProvider())
        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value")
        #expect(stored.status == 0, "\(stored.stderr) \(served.serveErrors)")
        #expect(try Self.lookup(served).output == "value")
        #expect(try Self.keychain(served, ["lock"]).status == 0)
        let after = try Self.lookup(served)
        #expect(after.output.isEmpty, "a secret after keychain lock: \(after.output)")
        #expect(!after.stderr.contains("CRITICAL"), "\(after.stderr)")
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }

    @Test("keychain unlock, then keychain serve with no passphrase source: programs store and read; keychain lock closes it at once")
    func serveAfterUnlockServesAndLocksAtOnce() throws {
        let served = try ServedVault(serving: false)
        let file = try Self.freshPassphraseVault(served)
        let unlocked = try Self.keychain(served, ["unlock"], ["KEYCHAIN_PASSPHRASE_FILE": file])
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        try served.startServing(environment: Self.keyring)
        #expect(served.waitForProvider())
        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value")
        #expect(stored.status == 0, "\(stored.stderr) \(served.serveErrors)")
        #expect(try Self.lookup(served).output == "value")
        #expect(try Self.keychain(served, ["lock"]).status == 0)
        #expect(try Self.lookup(served).output.isEmpty, "a secret right after keychain lock")
    }

    @Test("a serve holding the keys through the user's unlock hands out no secret once keychain lock returns (no second of grace)")
    func lockReachesAServeOfTheUsersUnlockAtOnce() throws {
        let served = try ServedVault(serving: false)
        let file = try Self.freshPassphraseVault(served)
        // Items of both classes first, so that the unlock below is the long-standing one (class keys on file).
        let set = try Subprocess.run(
            KeychainExecutable.path, ["set", "--identifier", "Druidia", "Skroob"],
            environment: served.environment.merging(Self.keyring.merging(["KEYCHAIN_PASSPHRASE_FILE": file]) { $1 }) { $1 }, input: Data("12345".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try Self.keychain(served, ["lock"]).status == 0)
        #expect(try Self.keychain(served, ["unlock"], ["KEYCHAIN_PASSPHRASE_FILE": file]).status == 0)
        try served.startServing(environment: Self.keyring)
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value").status == 0)
        for round in 1...3 {
            #expect(try Self.lookup(served).output == "value", "round \(round): \(served.serveErrors)")
            #expect(try Self.keychain(served, ["lock"]).status == 0)
            #expect(try Self.lookup(served).output.isEmpty, "round \(round): a secret right after keychain lock returned")
            #expect(try Self.keychain(served, ["unlock"], ["KEYCHAIN_PASSPHRASE_FILE": file]).status == 0)
        }
    }

    @Test("Service.Lock is keychain lock: another process's whenUnlocked read fails after it, and keychain status says locked")
    func serviceLockLocksEveryProcess() throws {
        let served = try ServedVault(serving: false)
        let file = try Self.freshPassphraseVault(served)
        #expect(try Self.keychain(served, ["unlock"], ["KEYCHAIN_PASSPHRASE_FILE": file]).status == 0)
        let set = try Subprocess.run(
            KeychainExecutable.path, ["set", "--identifier", "Druidia", "Skroob"], environment: served.environment.merging(Self.keyring) { $1 },
            input: Data("12345".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        let setAfterFirstUnlock = try Subprocess.run(
            KeychainExecutable.path, ["set", "--identifier", "Druidia", "--accessibility", "afterFirstUnlock", "Helmet"],
            environment: served.environment.merging(Self.keyring) { $1 }, input: Data("67890".utf8))
        #expect(setAfterFirstUnlock.status == 0, "\(setAfterFirstUnlock.stderr)")
        try served.startServing(environment: Self.keyring)
        #expect(served.waitForProvider())
        let locked = try served.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ])
        #expect(locked.status == 0, "\(locked.stderr)")
        let read = try Self.keychain(served, ["get", "--identifier", "Druidia", "Skroob"])
        #expect(read.status == 3, "read after Service.Lock: \(read.output) \(read.stderr)")
        let afterFirstUnlock = try Self.keychain(served, ["get", "--identifier", "Druidia", "--accessibility", "afterFirstUnlock", "Helmet"])
        #expect(afterFirstUnlock.status == 3, "an afterFirstUnlock read after Service.Lock, as after keychain lock: \(afterFirstUnlock.output)")
        #expect(try Self.keychain(served, ["status"]).output.contains("locked:            yes"))
    }

    @Test(
        "Python keyring reading a locked vault with no pinentry to show gets its own locked error",
        .enabled(if: PythonClient.unavailableReason == nil && PythonClient.hasKeyring, "needs KEYCHAIN_TEST_PYTHON with keyring (pip install keyring)"))
    func keyringTakesItsOwnFallback() throws {
        let served = try ServedVault(serving: false)
        let file = try Self.freshPassphraseVault(served)
        #expect(try Self.keychain(served, ["unlock"], ["KEYCHAIN_PASSPHRASE_FILE": file]).status == 0)
        try served.startServing(environment: Self.keyring.merging(["KEYCHAIN_PINENTRY": "/nonexistent/pinentry"]) { $1 })
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value").status == 0)
        #expect(try Self.keychain(served, ["lock"]).status == 0)
        let read = try PythonClient.run("keyring_locked.py", [], served)
        #expect(read.output == "locked\n", "\(read.output) \(read.stderr)")
    }

    @Test("a locked vault asked for a secret with no pinentry to show: the Unlock prompt ends dismissed, the client falls back cleanly")
    func lockedWithoutPinentryEndsDismissed() throws {
        let served = try ServedVault(serving: false)
        _ = try Self.freshPassphraseVault(served)
        try served.startServing(environment: Self.keyring.merging(["KEYCHAIN_PINENTRY": "/nonexistent/pinentry"]) { $1 })
        #expect(served.waitForProvider())
        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value")
        #expect(stored.status != 0, "stored into a locked vault")
        #expect(!stored.stderr.contains("CRITICAL"), "\(stored.stderr)")
        let looked = try Self.lookup(served)
        #expect(looked.output.isEmpty)
        #expect(!looked.stderr.contains("CRITICAL"), "\(looked.stderr)")
        #expect(!looked.stderr.contains("IsLocked"), "\(looked.stderr)")
        let log = served.serveErrors
        #expect(log.contains("run `keychain unlock`"), "\(log)")
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }
}
