import FoundationEssentials
import KeychainCore
internal import KeychainSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain sync ACTION`: enrolling this vault in a sync group and keeping it in step.
enum SyncCommand {
    static let command = Command(
        name: "sync", summary: "sync iCloud (synchronizable) items with your other machines through an etcd cluster, end-to-end encrypted",
        positionals: ["ACTION"], optionalPositionals: ["ARGUMENT"],
        options: [
            .value("endpoints", "URLS", "init, join: the etcd cluster's client URLs, comma-separated (http://127.0.0.1:2379,...)"),
            .value("name", "NAME", "init, join: this device's name in the group (default: the host name)"),
            .value("ca", "FILE", "init, join: PEM file of the private CA that signed the cluster's certificates"),
            .value("cert", "FILE", "init, join: client certificate (PEM), for a cluster that asks for one"),
            .value("key", "FILE", "init, join: the client certificate's private key (PEM)"),
            .value("code-file", "FILE", "join: read the invitation code from FILE (otherwise from standard input, or a no-echo prompt)"),
            .value("valid-for", "SECONDS", "invite: how long the invitation is valid (default 3600, at most 86400)"),
            .value("exclude", "DEVICES", "resolve: leave these devices (names or id starts, separated by commas) out of the new key"),
            .flag("once", "run: one round (send the outbox, apply what changed), then exit"),
            .value("idle", "SECONDS", "run: exit after SECONDS without a change sent or received (what an agent started on demand does)"),
            CommandTable.json,
        ],
        examples: [
            "keychain sync init --endpoints http://10.0.0.5:2379,http://10.0.0.6:2379,http://10.0.0.7:2379",
            "keychain sync invite                 # on a machine of the group: prints a code",
            "keychain sync join --endpoints http://10.0.0.5:2379   # on the new machine: type the code at the prompt",
            "keychain sync join --endpoints http://10.0.0.5:2379 --code-file code.txt",
            "keychain sync run                    # keep in sync in the foreground (init and join start an agent that does it)", "keychain sync status",
            "keychain sync remove-device 3f2a", "keychain sync resolve              # after a forked history, on the device whose history you trust",
        ],
        notes:
            "ACTION is init, invite, join, run, status, remove-device ID-OR-NAME, resolve or leave. After init and join, a sync agent keeps the vault in step by itself: a systemd user service where systemd runs your session, otherwise an agent that any keychain command starts when none runs and that exits after 15 idle minutes (KEYCHAIN_SYNC_AGENT_IDLE seconds; KEYCHAIN_SYNC_AGENT=off: never started). A set or remove sends its change at once when the cluster answers. The invitation code opens the group's keys: join reads it from standard input, a no-echo prompt or --code-file, never from the command line; case, spaces and dashes do not matter, and its last four letters catch a typo. Only synchronizable items travel (iCloud Valets, --icloud); ThisDeviceOnly items and items under an access control never do. etcd sees HMAC-named keys and padded ciphertext, never a service, account, group or value.",
        run: run, positionalChoices: actions)

    /// What `keychain sync` does, as ACTION.
    static let actions = ["init", "invite", "join", "run", "status", "remove-device", "resolve", "leave"]

    private static func run(_ context: Context) throws(CommandFailure) -> ExitCode {
        let action = context.arguments.positionals[0]
        let argument = context.arguments.positionals.dropFirst().first
        if action == "join", argument != nil {
            throw CommandFailure(
                "sync join does not take the invitation code on the command line, where other users and the shell's history see it; type it at the prompt, or give it on standard input or with --code-file FILE",
                code: .usage)
        }
        if argument != nil && action != "remove-device" { throw CommandFailure("sync \(action) takes no argument", code: .usage) }
        let vault = try context.vaultOnly("sync")
        switch action {
        case "init":
            let cluster = try cluster(context)
            let engine = try sync { () throws(SyncError) in try SyncEngine.create(vault: vault, cluster: cluster, deviceName: deviceName(context)) }
            let status = try sync { () throws(SyncError) in try engine.status() }
            let round = try sync { () throws(SyncError) in try engine.syncOnce() }
            try context.terminal.write("enrolled as device \(status.deviceID.prefix(8)) (\(status.deviceName)) in a new sync group; \(round.sent) items sent\n")
            startAgent(vault, context)
        case "invite":
            let seconds = try validity(context)
            let code = try sync { () throws(SyncError) in try SyncEngine(vault: vault).invite(validFor: seconds) }
            try context.terminal.write("\(code)\n")
            context.terminal.writeError(
                "Give this code to the new machine within \(seconds) seconds: keychain sync join --endpoints ... (it asks for the code, or reads it from standard input or --code-file)\n"
            )
        case "join":
            let cluster = try cluster(context)
            let code = try invitationCode(context)
            let engine = try sync { () throws(SyncError) in try SyncEngine.join(vault: vault, cluster: cluster, code: code, deviceName: deviceName(context)) }
            let round = try sync { () throws(SyncError) in try engine.syncOnce() }
            try context.terminal.write("joined; \(round.received) items received, \(round.sent) sent\n")
            startAgent(vault, context)
        case "run":
            let engine = try sync { () throws(SyncError) in try SyncEngine(vault: vault) }
            if context.arguments.has("once") {
                let round: SyncRound
                do {
                    round = try engine.syncOnce()
                } catch .unreachable(let why) {
                    let waiting = (try? engine.outboxLength()) ?? 0
                    throw CommandFailure("\(SyncError.unreachable(why).description) Reads and writes go on here; \(waiting) changes wait in the outbox.", code: .failure)
                } catch {
                    throw Self.failure(error)
                }
                // A round that refused anything did less than asked: the reason is on
                // standard error, and the exit status says so.
                return try report(round, context) ? .success : .failure
            }
            let idle = try idleSeconds(context)
            // One agent per vault: the lock is held until this process exits.
            let lock: SyncAgentLock?
            do { lock = try SyncAgentLock.acquire(for: vault.location) } catch { throw CommandFailure(error) }
            guard lock != nil else {
                let holder = SyncAgentLock.holder(for: vault.location).map { " (process \($0))" } ?? ""
                if idle == nil { context.terminal.writeError("keychain sync: a sync agent\(holder) already keeps this vault in step\n") }
                return .success
            }
            let terminal = context.terminal
            let ended = Ended()
            engine.run(
                until: {
                    if ended.value { return true }
                    guard let idle, engine.millisecondsSinceExchange >= UInt64(idle) * 1_000 else { return false }
                    return (try? engine.outboxLength()) == 0
                },
                onError: { error in
                    terminal.writeError("keychain sync: \(error.description)\n")
                    if error == .removed || error == .notEnrolled || error == .forked { ended.value = true }
                })
            withExtendedLifetime(lock) {}
            return ended.value ? .failure : .success
        case "status":
            let status = try sync { () throws(SyncError) in try SyncEngine(vault: vault).status() }
            try write(status, vault, context)
        case "remove-device":
            guard let which = argument else { throw CommandFailure("sync remove-device needs the device's id (or its start) or name", code: .usage) }
            let engine = try sync { () throws(SyncError) in try SyncEngine(vault: vault) }
            try sync { () throws(SyncError) in try engine.removeDevice(which) }
            try context.terminal.write("removed; the group has a new key, which that device does not hold, and its writes are refused\n")
            // The items are sealed again under the new key by the rounds that follow; one now.
            let resealed: SyncRound
            do throws(SyncError) {
                resealed = try engine.syncOnce()
            } catch {
                context.terminal.writeError("keychain sync: \(error.description) The items are sealed again under the new key by the next 'keychain sync run'.\n")
                return .success
            }
            try context.terminal.write("\(resealed.sent) items sealed again under the new key\n")
        case "resolve":
            let excluded = (context.arguments.value("exclude") ?? "").split(separator: ",").map { String($0) }.filter { !$0.isEmpty }
            let members = try sync { () throws(SyncError) in try SyncEngine(vault: vault).resolveFork(excluding: excluded) }
            try context.terminal.write(
                "resolved in favour of this device's history: the group has a new key, shared with \(members.joined(separator: ", ")); a device of the other history joins again ('keychain sync leave', then 'keychain sync join' with an invitation from this side)\n"
            )
        case "leave":
            try sync { () throws(SyncError) in try SyncEngine(vault: vault).leave() }
            try context.terminal.write("left the sync group; the items stay in this vault\n")
            // A running agent finds the vault no longer enrolled and exits by itself.
            if let executable = SyncAgent.selfExecutable(),
                SystemdUserUnit(vault: vault.location, executable: executable, environment: context.environment)?.uninstall() == true
            {
                context.terminal.writeError("keychain sync: the systemd user service of this vault was stopped and removed\n")
            }
        default:
            throw CommandFailure(
                "unknown sync action '\(action)'\(Suggestion.hint(action, among: actions)) (\(actions.joined(separator: ", ")))", code: .usage)
        }
        return .success
    }

    private final class Ended: Sendable {
        private let flag = Atomic(false)
        var value: Bool {
            get { flag.load(ordering: .acquiring) }
            set { flag.store(newValue, ordering: .releasing) }
        }
    }

    private static func cluster(_ context: Context) throws(CommandFailure) -> SyncCluster {
        guard let list = context.arguments.value("endpoints"), !list.isEmpty else {
            throw CommandFailure("give the cluster's client URLs with --endpoints URL[,URL...]", code: .usage)
        }
        func path(_ option: String) throws(CommandFailure) -> String? { try context.arguments.value(option).map { (p) throws(CommandFailure) in try context.absolutePath(p) } }
        let endpoints = list.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
        return SyncCluster(endpoints: endpoints, caFile: try path("ca"), certFile: try path("cert"), keyFile: try path("key"))
    }

    /// `--idle SECONDS`, or nil: run until stopped.
    private static func idleSeconds(_ context: Context) throws(CommandFailure) -> Int? {
        guard let text = context.arguments.value("idle") else { return nil }
        guard let seconds = Int(text), (1...86_400).contains(seconds) else { throw CommandFailure("--idle takes a number of seconds from 1 to 86400", code: .usage) }
        return seconds
    }

    /// After init and join: the systemd user service that keeps this vault in step, where
    /// systemd runs the session; otherwise an agent started now (and by later commands
    /// whenever none runs).
    private static func startAgent(_ vault: Vault, _ context: Context) {
        let terminal = context.terminal
        let source = SystemdUserUnit.PassphraseSource(vaultHasPassphrase: vault.hasPassphrase, environment: context.environment)
        if case .refused(let why) = source, SystemdUserUnit.userManagerRuns(context.environment) {
            terminal.writeError("keychain sync: no systemd user service was installed: \(why); commands start a sync agent instead\n")
        } else if let executable = SyncAgent.selfExecutable(),
            let unit = SystemdUserUnit(
                vault: vault.location, executable: executable, environment: context.environment,
                passphraseFile: { if case .credential(let file) = source { file } else { nil } }())
        {
            if let failure = unit.install() {
                terminal.writeError("keychain sync: the systemd user service was not installed (\(failure)); commands start a sync agent instead\n")
            } else {
                terminal.writeError("keychain sync: the systemd user service \(unit.name) keeps this vault in step\n")
                return
            }
        }
        guard SyncAgent.startsOnDemand(context.environment) else {
            terminal.writeError("keychain sync: KEYCHAIN_SYNC_AGENT=off: run 'keychain sync run' to keep this vault in step\n")
            return
        }
        if SyncAgentLock.holder(for: vault.location) == nil, SyncAgent.start(vault.location, environment: context.environment, by: "sync") {
            terminal.writeError("keychain sync: a sync agent keeps this vault in step while you use it (keychain commands start it again when it has exited)\n")
        }
    }

    private static func validity(_ context: Context) throws(CommandFailure) -> Int {
        guard let text = context.arguments.value("valid-for") else { return 3_600 }
        guard let seconds = Int(text), (1...86_400).contains(seconds) else {
            throw CommandFailure("--valid-for takes a number of seconds from 1 to 86400", code: .usage)
        }
        return seconds
    }

    /// The invitation code, from `--code-file`, standard input or a no-echo prompt: it opens the
    /// group's keys, so it never comes from the command line.
    private static func invitationCode(_ context: Context) throws(CommandFailure) -> String {
        let secret: SecretBytes
        if let file = context.arguments.value("code-file") {
            let path = try context.absolutePath(file)
            let fd: Int32
            do { fd = try SystemCall.open(path, O_RDONLY) } catch { throw CommandFailure("cannot read \(path): \(error.reason)", code: .failure) }
            defer { SystemCall.close(fd) }
            secret = try context.terminal.readAll(fd, limit: 4_096, what: path)
        } else if context.terminal.stdinIsTerminal {
            guard let typed = try context.terminal.prompt("Invitation code: ") else { throw CommandFailure("no terminal to read the code from", code: .usage) }
            secret = typed
        } else {
            secret = try context.terminal.readAll(STDIN_FILENO, limit: 4_096, what: "standard input")
        }
        // Whitespace anywhere is dropped by the parser (a code is often pasted with a newline).
        let code = secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        guard code.contains(where: { !$0.isWhitespace }) else { throw CommandFailure("no invitation code given (standard input was empty)", code: .usage) }
        return code
    }

    private static func deviceName(_ context: Context) -> String {
        if let name = context.arguments.value("name"), !name.isEmpty { return name }
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return host.isEmpty ? "device" : host
    }

    /// Writes what `round` did; whether it did all that was asked (nothing refused).
    private static func report(_ round: SyncRound, _ context: Context) throws(CommandFailure) -> Bool {
        if context.arguments.has("json") {
            try context.terminal.write(
                JSON.object([
                    "sent": .number(round.sent), "received": .number(round.received), "superseded": .number(round.superseded), "refused": .number(round.refused),
                ]).text + "\n")
        } else {
            try context.terminal.write("sent \(round.sent), received \(round.received)\n")
        }
        if round.refused > 0 {
            context.terminal.writeError(
                "keychain sync: \(round.refused) values from etcd did not open with the group's keys or were signed by no current member (edited, moved, forged, or written by a removed device) and were not used\n"
            )
        }
        if let alarm = round.membershipAlarm {
            context.terminal.writeError(
                "keychain sync: etcd served a \(SyncAlarmNotice.describe(alarm)) member list; it was refused and this device's list written back ('keychain sync status')\n")
        }
        return round.refused == 0 && round.membershipAlarm == nil
    }

    /// Whether an agent keeps the vault in step, and where its messages are.
    private static func agentState(_ vault: Vault, _ context: Context) -> String {
        let messages = SyncAgent.messages(vault.location, environment: context.environment)
        let running = SyncAgentLock.holder(for: vault.location).map { "running (process \($0))" } ?? "not running"
        return "\(running); its messages: \(messages)"
    }

    private static func write(_ status: SyncStatus, _ vault: Vault, _ context: Context) throws(CommandFailure) {
        let lag = status.clusterRevision.map { max(0, $0.subtractingReportingOverflow(status.cursor).partialValue) }
        let outbox = SyncOutboxNotice(status, agentRunning: SyncAgentLock.holder(for: vault.location) != nil)
        if context.arguments.has("json") {
            var object: [String: JSON] = [
                "endpoints": .array(status.endpoints.map { .string($0) }), "device": .string(status.deviceID), "name": .string(status.deviceName),
                "epoch": .number(Int(status.epoch)), "outbox": .number(status.outbox), "cursor": .number(Int(status.cursor)),
                "lastPull": .number(Int(status.lastPull)), "refused": .number(status.refused),
                "devices": .array(status.members.map { .object(["id": .string($0.id), "name": .string($0.name)]) }),
            ]
            if let revision = status.clusterRevision { object["clusterRevision"] = .number(Int(revision)) }
            if let lag { object["lag"] = .number(Int(lag)) }
            object["outboxItems"] = .number(status.outboxItems)
            object["outboxWaits"] = .array(outbox.waits.map(\.json))
            if let error = status.clusterError { object["clusterError"] = .string(error) }
            object["agentMessages"] = .string(SyncAgent.messages(vault.location, environment: context.environment))
            if let pid = SyncAgentLock.holder(for: vault.location) { object["agent"] = .number(Int(pid)) }
            if status.removed { object["removed"] = .bool(true) }
            if let alarm = status.alarm {
                object["membershipAlarm"] = .object([
                    "kind": .string(SyncAlarmNotice.kindName(alarm.kind)), "at": .number(Int(clamping: alarm.at)),
                    "servedEpoch": .number(Int(alarm.servedEpoch)), "heldEpoch": .number(Int(alarm.heldEpoch)), "count": .number(Int(alarm.count)),
                ])
            }
            try context.terminal.write(JSON.object(object).text + "\n")
            return
        }
        var devices = status.members.map { "\($0.id.prefix(8)) \($0.name)\($0.id == status.deviceID ? " (this device)" : "")" }.joined(separator: ", ")
        if status.removed {
            devices = "none: this device was removed from the group; to rejoin, 'keychain sync leave', then 'keychain sync join' with a new invitation"
        } else if devices.isEmpty {
            devices = "unknown (\(status.clusterError ?? "the member list did not open"))"
        }
        try context.terminal.write(
            """
            endpoints:     \(status.endpoints.joined(separator: ", "))
            device:        \(status.deviceID.prefix(8)) (\(status.deviceName))
            devices:       \(devices)
            group epoch:   \(status.epoch)
            outbox:        \(status.outbox) \(status.outbox == 1 ? "change" : "changes") of \(status.outboxItems) \(status.outboxItems == 1 ? "item" : "items")\(outbox.text)
            last applied:  revision \(status.cursor)
            lag:           \(lag.map { "\($0) revisions" } ?? "unknown (\(status.clusterError ?? "cluster unreachable"))")
            refused:       \(status.refused)
            agent:         \(agentState(vault, context))\n
            """)
        if let alarm = status.alarm { try context.terminal.write("membership:    \(SyncAlarmNotice.statusLine(alarm))\n") }
    }

    private static func sync<R>(_ body: () throws(SyncError) -> R) throws(CommandFailure) -> R {
        do {
            return try body()
        } catch {
            throw failure(error)
        }
    }

    private static func failure(_ error: SyncError) -> CommandFailure {
        switch error {
        case .store(let storeError): CommandFailure(storeError)
        case .invalidArgument, .invalidInvitation: CommandFailure(error.description, code: .usage)
        case .notEnrolled: CommandFailure(error.description, code: .notFound)
        default: CommandFailure(error.description, code: .failure)
        }
    }
}
