/// Why a sync operation failed. Messages name endpoints, revisions and counts, never an item's
/// service, account, access group or value.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// This vault is not enrolled in a sync group (`keychain sync init` or `join` first).
    case notEnrolled
    /// This vault is already enrolled in a sync group.
    case alreadyEnrolled
    /// No endpoint answered: every one was tried, and why the last failed is given.
    /// Local reads and writes go on; pending changes stay in the outbox.
    case unreachable(String)
    /// etcd answered with an error (its gRPC code and message).
    case server(code: Int, message: String)
    /// etcd answered something that is not what its API returns.
    case malformed(String)
    /// The invitation code is not one this program makes (mistyped: its check letters do not
    /// match; truncated).
    case invalidInvitation(String)
    /// No invitation matches the code on this cluster: it was used, it expired, or it was made
    /// for another cluster.
    case invitationNotFound
    /// The invitation is past the expiry sealed inside it, whatever etcd still serves.
    case invitationExpired
    /// This device was removed from the sync group: it receives nothing written since.
    case removed
    /// etcd showed this device a member list from another history of the group (a fork): it
    /// sends nothing until a person resolves it (``SyncEngine/resolveFork(excluding:)``).
    case forked
    /// The group's records on etcd do not open with this device's keys: they were edited,
    /// replaced or forged.
    case tampered(String)
    /// A local vault operation failed.
    case store(StoreError)
    /// The request itself is malformed (an endpoint that is not a URL, a missing option).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .notEnrolled: "This vault is not enrolled in a sync group; run 'keychain sync init' on the first machine, 'keychain sync join' on the others."
        case .alreadyEnrolled: "This vault is already enrolled in a sync group."
        case .unreachable(let why): "No etcd endpoint answered (\(why))."
        case .server(let code, let message): "etcd refused the request: \(message) (code \(code))."
        case .malformed(let what): "etcd answered something unexpected: \(what)."
        case .invalidInvitation(let why): "That is not an invitation code: \(why)."
        case .invitationNotFound:
            "No invitation matches that code on this cluster (the code is typed right: its check letters match): it was used, it expired, or it belongs to another cluster."
        case .invitationExpired: "That invitation has expired; make a new one with 'keychain sync invite' on a machine of the group."
        case .removed:
            "This device was removed from its sync group; it receives nothing written since. To rejoin: 'keychain sync leave', then 'keychain sync join' with a new invitation."
        case .forked:
            "etcd showed this device a member list from another history of its sync group (a fork: devices were shown different lists); it sends nothing until a person resolves it: 'keychain sync status' says how."
        case .tampered(let what): "The sync group's data on etcd failed verification (\(what)); it was not used."
        case .store(let error): error.description
        case .invalidArgument(let what): what
        }
    }
}
