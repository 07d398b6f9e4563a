import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What clients see of changes and mistakes, as gnome-keyring shows them.
@Suite("keychain serve's signals and property errors, as gnome-keyring's", .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"))
struct ClientSignalsTests {
    /// What `dbus-monitor` saw of `rule` while `action` ran (it runs until its output holds `until`, or a bounded wait).
    static func monitor(_ served: ServedVault, _ rule: String, until: String, _ action: () throws -> Void) throws -> String {
        let monitor = try Subprocess.launchReadingOutput("/usr/bin/dbus-monitor", ["--session", rule], environment: served.environment)
        defer {
            kill(monitor.pid, SIGTERM)
            _ = Subprocess.wait(for: monitor.pid)
            close(monitor.stdout)
        }
        var seen = ""
        func read(until text: String) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            for _ in 0..<200 where !seen.contains(text) {
                var descriptor = pollfd(fd: monitor.stdout, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 25) > 0 else { continue }
                let count = Glibc.read(monitor.stdout, &buffer, buffer.count)
                if count <= 0 { return }
                seen += String(decoding: buffer[0..<count], as: UTF8.self)
            }
        }
        // The monitor says when it listens: its own name on the bus.
        read(until: "NameAcquired")
        try action()
        read(until: until)
        return seen
    }

    @Test("setting a collection's Label sends the service's CollectionChanged for it, beside PropertiesChanged")
    func collectionChangedOnLabel() throws {
        let served = try ServedVault()
        let seen = try Self.monitor(served, "type='signal',interface='org.freedesktop.Secret.Service',member='CollectionChanged'", until: "collection/login") {
            let set = try served.run(
                "/usr/bin/dbus-send",
                [
                    "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login",
                    "org.freedesktop.DBus.Properties.Set", "string:org.freedesktop.Secret.Collection", "string:Label", "variant:string:Renamed",
                ])
            #expect(set.status == 0, "\(set.stderr)")
        }
        #expect(seen.contains("member=CollectionChanged"), "\(seen)")
        #expect(seen.contains("object path \"/org/freedesktop/secrets/collection/login\""), "\(seen)")
    }

    @Test("a property that does not exist, or may not be set, is InvalidArgs, as gnome-keyring answers")
    func propertyErrorsAreInvalidArgs() throws {
        let served = try ServedVault()
        let path = "/org/freedesktop/secrets/collection/login"
        let readOnly = try served.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", path, "org.freedesktop.DBus.Properties.Set", "string:org.freedesktop.Secret.Collection",
                "string:Locked", "variant:boolean:false",
            ])
        #expect(readOnly.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(readOnly.stderr)")
        let unknown = try served.run("/usr/bin/dbus-send", SecretServiceProperty.get("Nope", of: "org.freedesktop.Secret.Collection", at: path))
        #expect(unknown.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(unknown.stderr)")
    }
}
