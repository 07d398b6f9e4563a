import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Locks the vault when the user leaves: when logind says the machine is about to sleep
/// (`Manager.PrepareForSleep(true)`) and when one of the user's sessions locks (`Session.Lock`,
/// `loginctl lock-session`). The lock is the user's, as `keychain lock` (every process of the
/// user, at once). Listens on the system bus beside the session bus, on the daemon's thread;
/// without a system bus (a container) there is nothing to listen to, and the daemon serves on.
final class SessionLockWatch {
    static let logind = "org.freedesktop.login1"
    private let bus: BusConnection

    /// Starts listening, or nil (with the reason in the daemon's log) when there is no system bus;
    /// `locked` runs after each lock (the daemon tells its clients).
    init?(locking vault: Vault, beside session: BusConnection, then locked: @escaping () -> Void) {
        let lock = { (why: String) in
            guard vault.hasPassphrase else { return }
            vault.lockForUser()
            SecretServiceDaemon.log("locked the vault: \(why)")
            locked()
        }
        do throws(ServeError) {
            bus = try BusConnection(system: true)
            try bus.subscribe("type='signal',sender='\(Self.logind)',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'") { message in
                if case .boolean(true)? = (try? message.arguments())?.first { lock("the machine is going to sleep") }
            }
            try bus.subscribe("type='signal',sender='\(Self.logind)',interface='org.freedesktop.login1.Session',member='Lock'") { message in
                if Self.isUsersSession(message.path) { lock("the session locked") }
            }
        } catch {
            SecretServiceDaemon.log("no lock on suspend or session lock: \(error)")
            return nil
        }
        let descriptor = bus.descriptor
        guard descriptor >= 0 else { return nil }
        session.watch(descriptor) { [bus] in
            if !bus.processPending() { session.unwatch(descriptor) }
        }
    }

    /// Whether the session at `path` (`/org/freedesktop/login1/session/_31`) is one of this
    /// user's, as logind lists them in `/run/systemd/users/UID`; when that cannot be told, yes
    /// (a lock too many is the safe side).
    static func isUsersSession(_ path: String) -> Bool {
        guard let escaped = path.split(separator: "/").last, let text = try? FileSystem.readText("/run/systemd/users/\(getuid())") else { return true }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("SESSIONS=") }) else { return true }
        let sessions = line.dropFirst("SESSIONS=".count).split(separator: " ").map(String.init)
        return sessions.contains(unescape(String(escaped)))
    }

    /// An object path label as sd-bus escapes it (`_31` is `1`), unescaped.
    static func unescape(_ label: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(label.utf8)[...]
        while let first = utf8.first {
            if first == UInt8(ascii: "_"), utf8.count >= 3, let value = UInt8(String(decoding: utf8.dropFirst().prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(first)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
