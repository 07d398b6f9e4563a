/// Reading one property of an object the Secret Service's name owns, with `dbus-send` on the
/// session bus (a client outside the process, as other programs read them).
public enum SecretServiceProperty {
    /// The arguments of `dbus-send` that read `name` of `interface` on the object at `path`,
    /// waiting `replyTimeout` milliseconds for the answer when given (dbus-send's default otherwise).
    public static func get(_ name: String, of interface: String, at path: String, replyTimeout: Int? = nil) -> [String] {
        ["--session", "--print-reply"] + (replyTimeout.map { ["--reply-timeout=\($0)"] } ?? []) + [
            "--dest=org.freedesktop.secrets", path, "org.freedesktop.DBus.Properties.Get", "string:\(interface)", "string:\(name)",
        ]
    }

    /// The first string `dbus-send --print-reply` printed, or nil when it printed none.
    public static func string(in output: String) -> String? {
        guard let start = output.range(of: "string \"") else { return nil }
        return String(output[start.upperBound...].prefix { $0 != "\"" })
    }
}
