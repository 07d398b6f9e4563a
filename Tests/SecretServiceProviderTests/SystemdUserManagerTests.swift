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

    @Test(
        "the switch from a provider the bus started itself (in dbus.service's control group, not a unit of its own) stops that provider, not the bus: every item moves and keychain serve takes the name"
    )
    func switchLeavesTheBusRunning() throws {
        let manager = try SystemdUserManager()
        // An activation file without SystemdService=: the bus starts the program as its own child.
        let services = manager.home + "/data/dbus-1/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        try "test-password".write(toFile: manager.home + "/gk-password", atomically: true, encoding: .utf8)
        try """
        [D-BUS Service]
        Name=org.freedesktop.secrets
        Exec=/bin/sh -c "exec /usr/bin/gnome-keyring-daemon --unlock --foreground --components=secrets --control-directory=\(manager.runtime)/gk < \(manager.home)/gk-password"

        """.write(toFile: services + "/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
        let (uid, gid) = try OrdinaryUser.ids()
        for path in [manager.home + "/data/dbus-1", services, services + "/org.freedesktop.secrets.service", manager.home + "/gk-password"] { lchown(path, uid, gid) }

        let stored = try manager.run("/usr/bin/secret-tool", ["store", "--label=Token", "service", "moved"], input: "kept")
        try #require(stored.status == 0, "\(stored.stderr)")
        let provider = try #require(manager.secretsOwner())
        let group = try String(contentsOfFile: "/proc/\(provider)/cgroup", encoding: .utf8)
        try #require(group.contains("/dbus.service\n"), "the bus started the provider in its own control group: \(group)")
        let bus = manager.property("MainPID", of: "dbus.service")

        let switched = try manager.run(manager.keychain, ["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"])
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(manager.property("ActiveState", of: "dbus.service") == "active" && manager.property("MainPID", of: "dbus.service") == bus, "the bus still runs")
        #expect(eventually(seconds: 10) { kill(provider, 0) != 0 }, "the provider stopped")
        let owner = try #require(manager.secretsOwner())
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(owner)/exe")) == manager.home + "/data/keychain/serve/keychain")
        let looked = try manager.run("/usr/bin/secret-tool", ["lookup", "service", "moved"])
        #expect(looked.status == 0 && looked.output == "kept", "\(looked.stderr)")
    }

    @Test(
        "the switch from gnome-keyring run by its own unit (gnome-keyring-daemon.service) stops it through the unit, which stays stopped, and leaves the name to keychain serve with every item moved"
    )
    func switchStopsTheProvidersUnit() throws {
        let manager = try SystemdUserManager()
        // The distribution's unit, unlocking the login keyring at its start as a login's PAM
        // would, and started again by systemd whenever it ends other than by a stop job: only a
        // stop through the unit keeps it stopped.
        let dropIn = manager.home + "/config/systemd/user/gnome-keyring-daemon.service.d"
        try FileManager.default.createDirectory(atPath: dropIn, withIntermediateDirectories: true)
        try "test-password".write(toFile: manager.home + "/gk-password", atomically: true, encoding: .utf8)
        try """
        [Service]
        Restart=always
        RestartSec=100ms
        StandardInput=file:\(manager.home)/gk-password
        ExecStart=
        ExecStart=/usr/bin/gnome-keyring-daemon --foreground --unlock --components=secrets --control-directory=%t/gk

        """.write(toFile: dropIn + "/unlock.conf", atomically: true, encoding: .utf8)
        let (uid, gid) = try OrdinaryUser.ids()
        for path in [manager.home + "/config/systemd", manager.home + "/config/systemd/user", dropIn, dropIn + "/unlock.conf", manager.home + "/gk-password"] {
            lchown(path, uid, gid)
        }
        #expect(try manager.systemctl(["daemon-reload"]).status == 0)
        #expect(try manager.systemctl(["start", "gnome-keyring-daemon.service"]).status == 0)
        let provider = try #require(pid_t(manager.property("MainPID", of: "gnome-keyring-daemon.service")))
        try #require(eventually(seconds: 10) { manager.secretsOwner() == provider }, "gnome-keyring of the unit owns the name")
        // It makes the login collection shortly after it takes the name.
        let stored = eventually(seconds: 10) { (try? manager.run("/usr/bin/secret-tool", ["store", "--label=Token", "service", "unit"], input: "kept"))?.status == 0 }
        try #require(stored, "gnome-keyring of the unit stores an item")

        let switched = try manager.run(manager.keychain, ["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"])
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(eventually(seconds: 10) { manager.property("ActiveState", of: "gnome-keyring-daemon.service") == "inactive" }, "stopped through its unit")
        usleep(1_000_000)
        #expect(manager.property("ActiveState", of: "gnome-keyring-daemon.service") == "inactive", "systemd did not start it again")
        #expect(kill(provider, 0) != 0)
        let owner = try #require(manager.secretsOwner())
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(owner)/exe")) == manager.home + "/data/keychain/serve/keychain")
        let looked = try manager.run("/usr/bin/secret-tool", ["lookup", "service", "unit"])
        #expect(looked.status == 0 && looked.output == "kept", "\(looked.stderr)")
    }
}
