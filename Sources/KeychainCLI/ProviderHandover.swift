import KeychainCore
import KeychainServe
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `keychain migrate --foreign ... --switch`: the move and the change of provider as one
/// command, leaving no moment in which a program's store reaches a provider that is being
/// left and stays there unseen.
///
/// Into the vault: `keychain serve` is installed and started waiting in the bus's queue for
/// the name; the old provider, called by its unique name, is emptied into the vault while it
/// still serves; then it is stopped, and the bus hands the name to the waiting `keychain
/// serve` the moment it ends. Its signals are watched from before the first listing to its
/// end: anything it stored that no listing moved is moved again while it runs, and what it
/// took in its last moments fails the command, named. Gnome-keyring, KWallet and KeePassXC
/// never let another take their name, and `keychain serve` stops when replaced, so the name
/// cannot be taken before the move: the queue is what closes the gap.
///
/// Back: the activation file and unit go, the bus reads its configuration again, this vault's
/// `keychain serve` is stopped (the provider waiting in the queue, or the one the bus starts
/// next, gets the name), then the vault's items move into it; the vault is read from its file,
/// so nothing stored meanwhile can be missed.
enum ProviderHandover {
    /// How long a provider may take to end once asked to stop.
    static let endLimit: Duration = .seconds(15)
    /// How long a switch goes on moving what keeps arriving in the old provider before it
    /// gives up (leaving it serving, and holding what arrived).
    static let catchUpLimit: Duration = .seconds(10)

    // MARK: - Into the vault

    static func intoServe(_ context: Context, rule: ItemTransfer.ConflictRule) throws(CommandFailure) -> ExitCode {
        let installed = try ServeSwitch.install(context)
        let vault = try context.vault()
        do {
            try SecretServiceOwner.reloadBusConfiguration()
        } catch {
            throw CommandFailure("\(error.description): no session bus to switch on; nothing was moved", code: .failure)
        }
        guard let owner = try ask({ () throws(StoreError) in try SecretServiceOwner.current() }) else {
            context.terminal.writeError(
                "keychain: nothing owns org.freedesktop.secrets: the session bus's next Secret Service call starts keychain serve. No provider is running to move items from (one that is not running keeps them in its own files: start it, and run this again)\n"
            )
            return .success
        }
        let old: SecretServiceOwner
        var serving: pid_t?
        if owner.serves(vault) {
            // A rerun: keychain serve has the name; an old provider may wait behind it (started again to finish).
            guard let waiting = try ask({ () throws(StoreError) in try SecretServiceOwner.waiting() }).first(where: { !$0.serves(vault) }) else {
                context.terminal.writeError(
                    "keychain: keychain serve of this vault (\(owner.processID.map { "process \($0)" } ?? owner.uniqueName)) serves the session bus already, and no other provider waits for the name: nothing to move\n"
                )
                return .success
            }
            old = waiting
        } else {
            old = owner
            switch ServeSwitch.start(installed, context, ["--queue"]) {
            case .waiting(let pid), .owns(let pid): serving = pid
            case .failed(let why): throw CommandFailure("keychain serve could not wait for the name (\(why)); nothing was moved", code: .failure)
            }
            context.terminal.writeError("keychain: keychain serve (process \(serving!)) waits in the session bus's queue for org.freedesktop.secrets behind \(describe(old))\n")
        }
        var stopping = false
        do {
            return try empty(old, into: vault, context, rule: rule, serving: serving, stopping: &stopping)
        } catch {
            // Until the old provider is to stop, it serves on: the waiting keychain serve goes.
            if let serving, !stopping { ServeSwitch.stop(serving) }
            throw error
        }
    }

    /// Moves everything from `old` (while it runs), stops it, and proves that nothing it took
    /// meanwhile stayed in it.
    private static func empty(
        _ old: SecretServiceOwner, into vault: Vault, _ context: Context, rule: ItemTransfer.ConflictRule, serving: pid_t?, stopping: inout Bool
    ) throws(CommandFailure) -> ExitCode {
        let watch: ProviderActivityWatch
        do {
            watch = try ProviderActivityWatch(of: old.uniqueName)
        } catch {
            throw CommandFailure("could not watch \(describe(old)) on the session bus (\(error.description)); nothing was moved", code: .failure)
        }
        var passes = 1
        let catchUpDeadline = ContinuousClock.now + catchUpLimit
        while true {
            // Every item the provider stored from this listing on, listed or not: a store over
            // an item's attributes keeps its path, so a path listed is no proof of what moved.
            var arrived = Set<String>()
            let moved: ExitCode
            do {
                // The old provider itself, by its unique name, whoever owns the well-known one.
                moved = try ProviderSwitch.move(
                    context, from: .secretService, to: .vault, rule: rule, provider: old.uniqueName, watch: watch, storedSinceListing: &arrived)
            } catch  where passes > 1 {
                // Its "nothing was moved" speaks of this move alone.
                throw CommandFailure(
                    "\(error.message) (move \(passes) of the switch: what the earlier moves took is in the vault; \(describe(old)) still serves, holding the rest)",
                    code: error.code,
                    command: error.command)
            }
            guard moved == .success else {
                throw CommandFailure("the move from \(describe(old)) did not finish (above); it still serves, and keeps what stayed in it: run this again", code: .failure)
            }
            arrived.formUnion(watch.takeStored())
            if arrived.isEmpty { break }
            guard ContinuousClock.now < catchUpDeadline else {
                throw CommandFailure(
                    "items kept arriving in \(describe(old)) for \(catchUpLimit.components.seconds) s, over \(passes) moves (\(arrived.count) since the last listing); it still serves and keeps them: run this again when programs store less",
                    code: .failure)
            }
            context.terminal.writeError("keychain: \(arrived.count) item(s) arrived in \(describe(old)) during the move: moving again\n")
            passes += 1
        }
        if let memoryOnly = old.memoryOnlyItemCount(), memoryOnly > 0 {
            throw CommandFailure(
                "every item of \(describe(old))'s persistent collections moved, but it holds \(memoryOnly) item(s) in its memory-only session collection, which would end with it: it still serves; run this again once the programs that stored them are done with them",
                code: .failure)
        }
        // Left behind by --skip-locked, they would be where no program reaches them once it stops.
        if let locked = try? ProviderCollectionUnlock.lockedCollections(of: old), !locked.isEmpty {
            throw CommandFailure(
                "every item of \(describe(old))'s unlocked collections moved, but \(locked.count) locked collection(s) (\(locked.map { "'\($0.label)'" }.joined(separator: ", "))) stayed behind: stopped, it would keep them where no program reaches them. It still serves: unlock them (--unlock, or in its own manager), then run this again",
                code: .locked)
        }
        // Every item it listed is in the vault: it stops now, and the bus hands the name on.
        // From here keychain serve keeps waiting for the name, whatever fails: the old provider
        // holds nothing the vault lacks, and the moment it ends the name is served.
        stopping = true
        try stop(old, what: "the old provider", waiting: serving != nil)
        // KeePassXC now and then passes over a request to quit that reaches it while it saves
        // the deletes just made: until it ends, it is asked again (others have no such request).
        let endDeadline = ContinuousClock.now + endLimit
        var ended = false
        while !ended, ContinuousClock.now < endDeadline {
            ended = watch.waitForEnd(within: min(.seconds(2), endDeadline - ContinuousClock.now))
            if !ended { _ = old.askToQuit() }
        }
        let lateArrivals = watch.takeStored()
        guard ended else {
            throw CommandFailure(
                "\(describe(old)) was asked to stop but still runs after \(endLimit.components.seconds) s; it keeps serving: stop it, then run this again (keychain serve waits for the name)",
                code: .failure)
        }
        if !lateArrivals.isEmpty {
            throw CommandFailure(
                "\(lateArrivals.count) item(s) were stored into \(describe(old)) after its last listing and before it ended (\(lateArrivals.sorted().prefix(5).joined(separator: ", "))\(lateArrivals.count > 5 ? ", ..." : "")): they are in its own files, not in the vault. To move them, start it again (\(restartHint(old.program))): it waits behind keychain serve; then run this command again",
                code: .failure)
        }
        // The waiting keychain serve has the name now, or this vault's served before.
        var now: SecretServiceOwner?
        let deadline = ContinuousClock.now + endLimit
        repeat {
            now = try? SecretServiceOwner.current()
            if now?.serves(vault) == true { break }
            ServeSwitch.pause()
        } while ContinuousClock.now < deadline
        guard let now, now.serves(vault) else {
            throw CommandFailure(
                "every item moved and \(describe(old)) stopped, but org.freedesktop.secrets is \(now.map { "owned by \(describe($0))" } ?? "without an owner") rather than keychain serve of this vault: the next call may not reach it (keychain status says who serves)",
                code: .failure)
        }
        context.terminal.writeError(
            "keychain: switched: keychain serve of this vault (\(now.processID.map { "process \($0)" } ?? now.uniqueName)) owns org.freedesktop.secrets since \(describe(old)) stopped, and nothing arrived in it after its last listing\n"
        )
        if old.program == .gnomeKeyring {
            context.terminal.writeError(
                "keychain: at the next login the desktop may start gnome-keyring's secrets component again: hide its autostart entry (gnome-keyring-secrets.desktop, in ~/.config/autostart with Hidden=true)\n"
            )
        }
        return .success
    }

    // MARK: - Back

    static func backFromServe(_ context: Context, rule: ItemTransfer.ConflictRule) throws(CommandFailure) -> ExitCode {
        let vault = try context.vault()
        if let owner = try? SecretServiceOwner.current(), owner.serves(vault), let memoryOnly = owner.memoryOnlyItemCount(), memoryOnly > 0 {
            throw CommandFailure(
                "keychain serve of this vault (\(describe(owner))) holds \(memoryOnly) item(s) in its memory-only session collection, which would end with it: it keeps serving; run this again once the programs that stored them are done with them; nothing was moved",
                code: .failure)
        }
        let files = try ServeInstallation(executable: "keychain", vault: nil, environment: context.environment)
        var removed: [String] = []
        for path in [files.activationFile, files.unitFile] where (try? SystemCall.unlink(path)) != nil { removed.append(path) }
        if !removed.isEmpty { context.terminal.writeError("keychain: removed \(removed.joined(separator: " and "))\n") }
        do {
            try SecretServiceOwner.reloadBusConfiguration()
        } catch {
            throw CommandFailure("\(error.description): no session bus to switch on; nothing was moved", code: .failure)
        }
        // One of this vault's waiting for the name (a switch into the vault that did not finish)
        // would take it once the provider ends, serving a vault this move empties.
        for queued in (try? SecretServiceOwner.waiting()) ?? [] where queued.serves(vault) {
            try stop(queued, what: "keychain serve of this vault waiting in the bus's queue", waiting: false)
            context.terminal.writeError("keychain: stopped keychain serve of this vault waiting in the bus's queue for the name (\(describe(queued)))\n")
        }
        if let owner = try ask({ () throws(StoreError) in try SecretServiceOwner.current() }), owner.serves(vault) {
            let waiting = (try? SecretServiceOwner.waiting())?.first
            try stop(owner, what: "keychain serve of this vault", waiting: waiting != nil)
            let deadline = ContinuousClock.now + endLimit
            var now: SecretServiceOwner? = owner
            while ContinuousClock.now < deadline {
                now = try? SecretServiceOwner.current()
                if now?.serves(vault) != true { break }
                ServeSwitch.pause()
            }
            if now?.serves(vault) == true {
                throw CommandFailure(
                    "keychain serve of this vault (\(describe(owner))) was asked to stop but still serves: stop it, then run this again; nothing was moved", code: .failure)
            }
            context.terminal.writeError(
                "keychain: stopped keychain serve of this vault (\(describe(owner))): \(now.map { "\(describe($0)) owns org.freedesktop.secrets now" } ?? "the next call starts the provider the bus's activation files name")\n"
            )
        }
        var unused = Set<String>()
        return try ProviderSwitch.move(context, from: .vault, to: .secretService, rule: rule, storedSinceListing: &unused)
    }

    // MARK: - Stopping a provider

    /// Stops `owner`'s process where it is this user's: its systemd user unit where it runs in
    /// one (else systemd would start it again), else through its own interface where it has one
    /// (``SecretServiceOwner/askToQuit(timeout:)``), else with SIGTERM. Refuses another user's.
    private static func stop(_ owner: SecretServiceOwner, what: String, waiting: Bool) throws(CommandFailure) {
        let handover = waiting ? "keychain serve waits in the bus's queue and takes the name the moment it ends" : "the next call starts the provider the activation files name"
        guard let pid = owner.processID, let user = owner.userID(), user == getuid() else {
            throw CommandFailure(
                "\(what) (\(describe(owner))) runs as another user (or the bus does not say which), so it is not stopped here: stop it as its user; \(handover). Every item it held is in the vault; what it takes until it stops stays in it",
                code: .failure)
        }
        if let unit = userUnit(of: pid) {
            guard ChildProcess.run(["systemctl", "--user", "stop", unit]) == 0 else {
                throw CommandFailure("systemctl --user stop \(unit) failed: \(what) (\(describe(owner))) still serves; stop it, then run this again", code: .failure)
            }
        } else if !owner.askToQuit() {
            do { try SystemCall.kill(pid, SIGTERM) } catch {
                throw CommandFailure("could not stop \(what) (\(describe(owner))): \(error.description)", code: .failure)
            }
        }
    }

    /// The systemd user unit (`gnome-keyring-daemon.service`) whose main process `pid` is: its
    /// control group names the unit, and the user manager must say the unit's `MainPID` is
    /// `pid`. A process the bus started itself runs in `dbus.service`'s group, whose main
    /// process is the bus: stopping that unit would stop the bus. Nil outside a unit of its own
    /// (started by hand, or by the bus).
    static func userUnit(of pid: pid_t) -> String? {
        guard let text = try? FileSystem.readText("/proc/\(pid)/cgroup") else { return nil }
        // cgroup v2: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/gnome-keyring-daemon.service"
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }), line.contains("/user@") else { return nil }
        let unit = line.split(separator: "/").last.map(String.init) ?? ""
        guard unit.hasSuffix(".service"), !unit.hasPrefix("user@") else { return nil }
        let main = ChildProcess.output(["systemctl", "--user", "show", "--property=MainPID", "--value", unit])
        return main?.split(separator: "\n").first == Substring(String(pid)) ? unit : nil
    }

    private static func restartHint(_ program: SecretServiceProgram) -> String {
        switch program {
        case .gnomeKeyring: "gnome-keyring-daemon --start --components=secrets"
        case .kwallet: "kwalletd5"
        case .keepassxc: "keepassxc"
        default: "its program"
        }
    }

    static func describe(_ owner: SecretServiceOwner) -> String {
        let process = owner.processID.map { "process \($0)" } ?? owner.uniqueName
        if let served = owner.servedVault { return "keychain serve of \(served.path), \(process)" }
        return "\(owner.program == .unknown ? "the provider" : owner.program.rawValue), \(process)"
    }

    private static func ask<R>(_ body: () throws(StoreError) -> R) throws(CommandFailure) -> R {
        do { return try body() } catch { throw CommandFailure(error) }
    }
}
