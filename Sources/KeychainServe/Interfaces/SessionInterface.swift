/// `org.freedesktop.Secret.Session`, on `/org/freedesktop/secrets/session/N`.
enum SessionInterface {
    static let name = "org.freedesktop.Secret.Session"
}

extension SecretServiceDaemon {
    func sessionCall(_ member: String, _ call: Call) throws(ServiceError) -> [BusValue] {
        // Close: only by the client that opened it.
        try sessions.close(call.path, by: call.sender)
        return []
    }
}
