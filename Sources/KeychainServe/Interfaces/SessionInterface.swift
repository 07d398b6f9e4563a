/// `org.freedesktop.Secret.Session`, on `/org/freedesktop/secrets/session/N`.
enum SessionInterface {
    static let name = "org.freedesktop.Secret.Session"
}

extension SecretServiceDaemon {
    func sessionCall(_ member: String, _ call: Call) throws(ServiceError) -> [BusValue] {
        // Close: only by the client that opened it.
        let session = try session(call.path, for: call.sender)
        sessions[session.path] = nil
        sessionsByClient[session.owner, default: 1] -= 1
        if sessionsByClient[session.owner] == 0 { sessionsByClient[session.owner] = nil }
        return []
    }
}
