import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What clients hear when another process locks or unlocks the vault (`keychain lock`,
/// `keychain unlock`, the idle lock): what gnome-keyring sends for a lock, from a running
/// `keychain serve` that made none of it.
@Suite("Clients hear of a lock or unlock made elsewhere", .serialized, .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct LockSignalsTests {
    /// `dbus-monitor` on the served bus, listening for the Secret Service's change signals.
    final class SignalMonitor {
        let pid: pid_t
        let output: Int32
        private(set) var seen = ""

        init(_ served: ServedVault) throws {
            let rules = [
                "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
                "type='signal',interface='org.freedesktop.Secret.Service',member='CollectionChanged'",
                "type='signal',interface='org.freedesktop.Secret.Collection',member='ItemChanged'",
            ]
            (pid, output) = try Subprocess.launchReadingOutput("/usr/bin/dbus-monitor", ["--session"] + rules, environment: served.environment)
            // The monitor says when it listens: its own name on the bus.
            _ = wait { $0.contains("NameAcquired") }
        }

        deinit {
            kill(pid, SIGTERM)
            _ = Subprocess.wait(for: pid)
            close(output)
        }

        /// Reads what the monitor prints until `condition` holds of it, or a generous bound.
        func wait(seconds: Double = 30, until condition: (String) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !condition(seen) {
                guard Date() < deadline else { return false }
                var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 100) > 0 else { continue }
                let count = read(output, &buffer, buffer.count)
                if count <= 0 { return condition(seen) }
                seen += String(decoding: buffer[0..<count], as: UTF8.self)
            }
            return true
        }

        /// How much the monitor has printed so far: a mark for ``signals(since:)``.
        var mark: Int { seen.utf8.count }

        /// The signals seen since `mark`, one string each (its header line and its body).
        func signals(since mark: Int) -> [String] {
            String(decoding: seen.utf8.dropFirst(mark), as: UTF8.self).components(separatedBy: "\nsignal ").map { $0.hasPrefix("signal ") ? String($0.dropFirst(7)) : $0 }
        }

        /// Whether a `PropertiesChanged` from `path` says `Locked` is now `locked`.
        static func saysLocked(_ signals: [String], path: String, _ locked: Bool) -> Bool {
            signals.contains { signal in
                signal.contains("path=\(path);") && signal.contains("member=PropertiesChanged") && signal.contains("string \"Locked\"")
                    && signal.contains("boolean \(locked)")
            }
        }

        /// Whether a signal `member` came from `path` naming `argument`.
        static func has(_ signals: [String], _ member: String, from path: String, naming argument: String) -> Bool {
            signals.contains { $0.contains("path=\(path);") && $0.contains("member=\(member)") && $0.contains("object path \"\(argument)\"") }
        }
    }

    static let login = "/org/freedesktop/secrets/collection/login"

    /// A passphrase vault unlocked for the user, served by a `keychain serve` with no
    /// passphrase of its own, holding one item stored through it; the item's path.
    static func servedWithItem(_ served: ServedVault, unlockTimeout: String? = nil) throws -> (file: String, item: String) {
        let file = try OneLockStateTests.freshPassphraseVault(served)
        let unlocked = try OneLockStateTests.keychain(served, ["unlock"] + (unlockTimeout.map { ["--timeout", $0] } ?? []), ["KEYCHAIN_PASSPHRASE_FILE": file])
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        try served.startServing(environment: OneLockStateTests.keyring)
        #expect(served.waitForProvider())
        let stored = try served.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "x"], input: "value")
        #expect(stored.status == 0, "\(stored.stderr) \(served.serveErrors)")
        return (file, try itemPath(served))
    }

    /// The path of the login collection's one item.
    static func itemPath(_ served: ServedVault) throws -> String {
        let search = try served.run("/usr/bin/dbus-send", SecretServiceProperty.get("Items", of: "org.freedesktop.Secret.Collection", at: login))
        return try #require(search.output.split(separator: "\"").map(String.init).first { $0.hasPrefix(login + "/") }, "\(search.output)")
    }

    @Test(
        "keychain lock in another process: the serve tells clients Locked=true on the collection and its items, with CollectionChanged and ItemChanged; keychain unlock: Locked=false"
    )
    func externalLockAndUnlockAreSignalled() throws {
        let served = try ServedVault(serving: false)
        let (file, item) = try Self.servedWithItem(served)
        let monitor = try SignalMonitor(served)

        let beforeLock = monitor.mark
        #expect(try OneLockStateTests.keychain(served, ["lock"]).status == 0)
        let lockHeard = monitor.wait { _ in SignalMonitor.saysLocked(monitor.signals(since: beforeLock), path: Self.login, true) }
        #expect(lockHeard, "no Locked=true after keychain lock: \(monitor.seen) \(served.serveErrors)")
        let locking = monitor.signals(since: beforeLock)
        #expect(SignalMonitor.saysLocked(locking, path: item, true), "the item's Locked: \(locking)")
        #expect(SignalMonitor.has(locking, "CollectionChanged", from: "/org/freedesktop/secrets", naming: Self.login), "\(locking)")
        #expect(SignalMonitor.has(locking, "ItemChanged", from: Self.login, naming: item), "\(locking)")

        let beforeUnlock = monitor.mark
        #expect(try OneLockStateTests.keychain(served, ["unlock"], ["KEYCHAIN_PASSPHRASE_FILE": file]).status == 0)
        let unlockHeard = monitor.wait { _ in SignalMonitor.saysLocked(monitor.signals(since: beforeUnlock), path: Self.login, false) }
        #expect(unlockHeard, "no Locked=false after keychain unlock: \(monitor.signals(since: beforeUnlock)) \(served.serveErrors)")
        let unlocking = monitor.signals(since: beforeUnlock)
        #expect(SignalMonitor.saysLocked(unlocking, path: item, false), "the item's Locked: \(unlocking)")
        #expect(SignalMonitor.has(unlocking, "CollectionChanged", from: "/org/freedesktop/secrets", naming: Self.login), "\(unlocking)")
        // Told once: a lock state is not announced again at each look.
        #expect(!SignalMonitor.saysLocked(unlocking, path: Self.login, true), "\(unlocking)")
    }

    @Test(
        "a suspend (logind's PrepareForSleep) is told to clients as a lock: Locked=true on the collection and its items",
        .enabled(if: MockLogindNeeds.unavailableReason == nil, "\(MockLogindNeeds.unavailableReason ?? "")"))
    func suspendIsSignalled() throws {
        let served = try ServedVault(serving: false)
        let logind = try MockLogind(in: served.directory)
        _ = try LeavingLocksTests.unlockedServe(served, logind)
        let item = try Self.itemPath(served)
        let monitor = try SignalMonitor(served)
        let mark = monitor.mark
        try logind.prepareForSleep(true)
        let heard = monitor.wait { _ in SignalMonitor.saysLocked(monitor.signals(since: mark), path: Self.login, true) }
        #expect(heard, "no Locked=true after PrepareForSleep(true): \(monitor.seen) \(served.serveErrors)")
        #expect(SignalMonitor.saysLocked(monitor.signals(since: mark), path: item, true), "\(monitor.signals(since: mark))")
    }

    @Test("the idle lock, which no process makes: clients are told Locked=true once the user's unlock timed out")
    func idleLockIsSignalled() throws {
        let served = try ServedVault(serving: false)
        _ = try Self.servedWithItem(served, unlockTimeout: "2")
        let monitor = try SignalMonitor(served)
        let mark = monitor.mark
        let heard = monitor.wait { _ in SignalMonitor.saysLocked(monitor.signals(since: mark), path: Self.login, true) }
        #expect(heard, "no Locked=true after the idle lock: \(monitor.seen) \(served.serveErrors)")
    }
}
