import KeychainCore

/// A sync membership alarm in words: for `sync status`, a round's report, and the standard
/// error of every command while nothing written on this device travels (a forked history, a
/// removal), so that no one learns it only from `sync status`.
enum SyncAlarmNotice {
    /// The alarm's kind as `sync status --json` names it.
    static func kindName(_ kind: SyncMembershipAlarm.Kind) -> String {
        switch kind {
        case .rolledBack: "rolled back"
        case .forked: "forked"
        case .removed: "removed"
        case .forkedHistory: "forked history"
        }
    }

    /// The kind as an adjective of "member list".
    static func describe(_ kind: SyncMembershipAlarm.Kind) -> String {
        switch kind {
        case .rolledBack: "rolled-back"
        case .forked: "forked"
        case .removed: "new"
        case .forkedHistory: "forked-history"
        }
    }

    /// What `sync status` says of `alarm`, and what to do.
    static func statusLine(_ alarm: SyncMembershipAlarm) -> String {
        let when = "\(alarm.count) time(s), last at \(alarm.at / 1_000) s since 1970"
        switch alarm.kind {
        case .rolledBack, .forked:
            return
                "etcd served a \(describe(alarm.kind)) member list (epoch \(alarm.servedEpoch); this device holds epoch \(alarm.heldEpoch)) \(when); it was refused and the held list written back"
        case .removed:
            return
                "this device was removed from the group (epoch \(alarm.servedEpoch) leaves it out); nothing written here travels. To rejoin: 'keychain sync leave', then 'keychain sync join' with a new invitation"
        case .forkedHistory:
            return
                "forked history: etcd showed this device a member list of epoch \(alarm.servedEpoch) from another history of the group (this device holds epoch \(alarm.heldEpoch)) \(when); this device sends nothing until it is resolved. Resolve it on the one device whose history you trust: 'keychain sync resolve' (a new group key from its member list); on every device of the other history, 'keychain sync leave', then 'keychain sync join' with an invitation from the trusted side"
        }
    }

    /// Says on standard error, after any command on an enrolled vault, that what is written
    /// here does not travel, when this device was removed or met a forked history.
    static func write(_ vault: Vault, _ context: Context, command: String) {
        guard let engine = try? SyncEngine(vault: vault), let alarm = try? engine.membershipAlarm() else { return }
        switch alarm.kind {
        case .removed:
            context.terminal.writeError(
                "keychain: this device was removed from its sync group: synchronizable items written here do not travel to the other devices ('keychain sync status')\n"
            )
        case .forkedHistory:
            context.terminal.writeError(
                "keychain: this device met a forked history of its sync group: nothing written here travels until a person resolves it ('keychain sync status' says how)\n"
            )
        case .rolledBack, .forked: break
        }
    }
}
