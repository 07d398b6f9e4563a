import KeychainCore

/// What waits in the outbox and why, in words, for `sync status`: the items whose values the
/// locked vault cannot open to seal (they leave whole at the first round after the unlock),
/// and the rest, held by the first of the reasons that stops a push (a removal, a forked
/// history, a cluster that does not answer, no agent to send them).
struct SyncOutboxNotice {
    /// One reason, with the items and changes it holds.
    struct Wait {
        /// A name `--json` gives it: `locked`, `removed`, `forked history`, `unreachable`,
        /// `no agent`, `next round`.
        let reason: String
        let items: Int
        let changes: Int
        /// Why, and what sends them.
        let detail: String

        /// "2 items wait: locked (...)".
        var line: String {
            "\(items) \(items == 1 ? "item waits" : "items wait") (\(changes) \(changes == 1 ? "change" : "changes")): \(reason) (\(detail))"
        }

        var json: JSON {
            .object(["reason": .string(reason), "items": .number(items), "changes": .number(changes), "detail": .string(detail)])
        }
    }

    let waits: [Wait]

    /// `agentRunning`: whether a sync agent holds the vault's lock (it sends at its next round).
    init(_ status: SyncStatus, agentRunning: Bool) {
        var waits: [Wait] = []
        if status.outboxLocked > 0 {
            waits.append(
                Wait(
                    reason: "locked", items: status.outboxLocked, changes: status.outboxLockedChanges,
                    detail: "their secrets need the vault unlocked to be sealed; they leave whole at the first round after 'keychain unlock'"))
        }
        let items = status.outboxItems - status.outboxLocked
        let changes = status.outbox - status.outboxLockedChanges
        if items > 0 {
            let (reason, detail): (String, String) =
                if status.removed || status.alarm?.kind == .removed {
                    ("removed", "this device was removed from the group: nothing written here travels")
                } else if status.alarm?.kind == .forkedHistory {
                    ("forked history", "this device sends nothing until 'keychain sync resolve' or a new join")
                } else if let error = status.clusterError {
                    ("unreachable", "the cluster does not answer (\(error)); they leave when it does")
                } else if !agentRunning {
                    ("no agent", "no sync agent runs to send them ('keychain sync run')")
                } else {
                    ("next round", "the sync agent sends them at its next round")
                }
            waits.append(Wait(reason: reason, items: items, changes: changes, detail: detail))
        }
        self.waits = waits
    }

    /// One line per reason, each on a new line indented under the `outbox:` line.
    var text: String {
        waits.map { "\n               " + $0.line }.joined()
    }
}
