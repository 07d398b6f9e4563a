import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain serve` and the switch under a real systemd user manager: its bus (`dbus.socket`, at
/// `$XDG_RUNTIME_DIR/bus`, found with no `DBUS_SESSION_BUS_ADDRESS` set), its D-Bus activation
/// through units, and its units as the user's.
@Suite("Under a systemd user manager", .serialized, .enabled(if: SystemdUserManager.unavailableReason == nil, "\(SystemdUserManager.unavailableReason ?? "")"))
struct SystemdUserManagerTests {
    @Test(
        "after keychain serve --install, the next secret-tool call through $XDG_RUNTIME_DIR/bus is answered by keychain serve that systemd started as keychain-serve.service; it stops when idle and the next call brings it back"
    )
    func activationThroughTheUserManager() throws {
        let manager = try SystemdUserManager()
        let installed = try manager.run(manager.keychain, ["serve", "--install", "--idle-exit", "2"])
        #expect(installed.status == 0, "\(installed.stderr)")

        let stored = try manager.run("/usr/bin/secret-tool", ["store", "--label=Token", "service", "api"], input: "first")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(manager.property("ActiveState", of: "keychain-serve.service") == "active")
        let first = pid_t(manager.property("MainPID", of: "keychain-serve.service")) ?? 0
        #expect(first > 0 && manager.secretsOwner() == first, "the unit's main process owns the name")
        let copy = manager.home + "/data/keychain/serve/keychain"
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(first)/exe")) == copy)

        // Idle, it gives the name up and ends; the unit ends with it.
        #expect(eventually(seconds: 20) { manager.property("ActiveState", of: "keychain-serve.service") == "inactive" }, "keychain serve started by systemd stops when idle")
        #expect(manager.secretsOwner() == nil)

        let looked = try manager.run("/usr/bin/secret-tool", ["lookup", "service", "api"])
        #expect(looked.status == 0 && looked.output == "first", "\(looked.stderr)")
        let second = pid_t(manager.property("MainPID", of: "keychain-serve.service")) ?? 0
        #expect(second > 0 && second != first && manager.secretsOwner() == second)
    }
}
