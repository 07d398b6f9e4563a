import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Which pinentry the daemon runs to ask for the vault's passphrase, and where it can show it;
/// nil (no ``choose(environment:)`` result) when none can be shown, and `Unlock` then tells the
/// user to run `keychain unlock`.
///
/// The program is `KEYCHAIN_PINENTRY` (a path), else `pinentry` on `PATH`. It can be shown on a
/// display (`DISPLAY` or `WAYLAND_DISPLAY`: pinentry-gnome3, -gtk, -qt) or on a terminal:
/// `GPG_TTY` (as gpg-agent takes it), else the daemon's standard input when that is a terminal
/// (`keychain serve` run in one). A daemon started by D-Bus activation or systemd without a
/// display has neither, and never waits on a pinentry nobody can see.
struct PinentryChoice: Sendable {
    /// The pinentry program's path.
    let program: String
    /// The terminal it draws on (`OPTION ttyname`), and its type (`OPTION ttytype`, from `TERM`).
    let ttyName: String?
    let ttyType: String?
    /// The pinentry's whole environment: what finds a display, a locale, a terminal type; never
    /// a vault's passphrase file.
    let environment: [String: String]

    /// Variables a pinentry of any flavour may need, passed on as the daemon has them.
    private static let passedOn = [
        "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
        "XDG_RUNTIME_DIR", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS",
    ]

    /// The pinentry `environment` offers and where it can be shown; nil when there is no program
    /// or nowhere to show it. `standardInputTerminal` is the daemon's standard input's terminal.
    static func choose(environment: [String: String], standardInputTerminal: String? = Self.standardInputTerminal) -> PinentryChoice? {
        guard let program = program(environment) else { return nil }
        var ttyName = environment["GPG_TTY"].flatMap { $0.isEmpty ? nil : $0 } ?? standardInputTerminal
        if let name = ttyName, !isTerminal(name) { ttyName = nil }
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        guard display || ttyName != nil else { return nil }
        let type = environment["TERM"].flatMap { $0.isEmpty || $0 == "dumb" ? nil : $0 }
        var passed: [String: String] = [:]
        for name in passedOn { passed[name] = environment[name] }
        return PinentryChoice(program: program, ttyName: ttyName, ttyType: ttyName == nil ? nil : (type ?? "vt100"), environment: passed)
    }

    /// `KEYCHAIN_PINENTRY` when it names an executable, else `pinentry` in a directory of `PATH`.
    private static func program(_ environment: [String: String]) -> String? {
        if let named = environment["KEYCHAIN_PINENTRY"], !named.isEmpty {
            return named.hasPrefix("/") && SystemCall.accessible(named, X_OK) ? named : nil
        }
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") where directory.hasPrefix("/") {
            let candidate = String(directory) + "/pinentry"
            if SystemCall.accessible(candidate, X_OK) { return candidate }
        }
        return nil
    }

    /// The terminal on the daemon's standard input, when it has one.
    static var standardInputTerminal: String? {
        SystemCall.isTerminal(STDIN_FILENO) ? SystemCall.terminalName(STDIN_FILENO) : nil
    }

    private static func isTerminal(_ path: String) -> Bool {
        guard let status = try? SystemCall.stat(path) else { return false }
        return (status.st_mode & S_IFMT) == S_IFCHR
    }
}
