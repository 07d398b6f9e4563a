/// `org.freedesktop.Secret.Session`, on `/org/freedesktop/secrets/session/N`.
enum SessionInterface {
    static let name = "org.freedesktop.Secret.Session"

    static let methods = [
        // Only by the client that opened it.
        ServedMethod(name, "Close", "", "") { (daemon, call) throws(ServiceError) in
            try daemon.sessions.close(call.path, by: call.sender)
            return []
        }
    ]
}
