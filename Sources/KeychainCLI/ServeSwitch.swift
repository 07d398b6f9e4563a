import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Making a `keychain serve --install` take on the session bus running now, and saying who
/// serves after it: the bus reads its activation files again (else it keeps starting the
/// provider it read at its start), a `keychain serve` of another vault is replaced at once
/// (the one provider that lets another take its name), and any other owner is named with what
/// to do.
enum ServeSwitch {
    /// What `--install` wrote, and how to start the `keychain serve` it names.
    struct Installed {
        let installation: ServeInstallation
        /// `keychain serve` as the files start it: the program and its arguments.
        let command: [String]
        /// The idle exit the install was given, if any.
        let idleExit: Int?
    }

    /// Writes the activation file and the unit (copying a program run from a transient place
    /// to a stable one first), saying what it wrote.
    static func install(_ context: Context) throws(CommandFailure) -> Installed {
        guard try context.storeKind() == .vault else { throw CommandFailure("serve --install serves the vault; --backend secret-service is the provider itself", code: .usage) }
        // A vault chosen by --vault or KEYCHAIN_PATH is named in the files; the default one is
        // found as every command finds it, in the environment of the session that starts it.
        let chosen = context.arguments.value("vault") != nil || context.environment["KEYCHAIN_PATH"] != nil
        var executable = ServeInstallation.executable
        if ServeInstallation.isTransient(executable, environment: context.environment) {
            let copy = try ServeInstallation.copyToStablePlace(executable, environment: context.environment)
            context.terminal.writeError(
                "keychain: \(executable) is in a build folder or a temporary directory, which cleaning or moving removes: copied it to \(copy), which the files name (install the command with scripts/install.sh, then run keychain serve --install again, to name the installed one)\n"
            )
            executable = copy
        }
        let vault = chosen ? try context.location.path : nil
        let idleExit = try ServeCommand.idleExitSeconds(context)
        let installation = try ServeInstallation(executable: executable, vault: vault, idleExit: idleExit, environment: context.environment)
        try installation.write()
        context.terminal.writeError("keychain: wrote \(installation.activationFile) and \(installation.unitFile)\n")
        return Installed(installation: installation, command: [executable, "serve"] + (vault.map { ["--vault", $0] } ?? []), idleExit: idleExit)
    }

    /// Reloads the bus's configuration and makes the next Secret Service call reach `keychain
    /// serve` where that can be done now (nothing owns the name, or another vault's `keychain
    /// serve` does, which is replaced); describes what the next call reaches.
    static func takeEffect(_ context: Context, vault: Vault?, installed: Installed) -> String {
        do {
            try SecretServiceOwner.reloadBusConfiguration()
        } catch {
            return "no session bus here to tell (\(error.description)): the files take effect in the next session"
        }
        let owner: SecretServiceOwner?
        do {
            owner = try SecretServiceOwner.current()
        } catch {
            return "the session bus read the files again, but did not say who owns org.freedesktop.secrets (\(error.description))"
        }
        guard let owner else {
            return "the session bus read the files again: its next Secret Service call starts keychain serve (systemctl --user daemon-reload too, where systemd runs the session)"
        }
        let process = owner.processID.map { "process \($0)" } ?? owner.uniqueName
        if let vault, owner.serves(vault) { return "keychain serve of this vault (\(process)) serves the session bus already" }
        if let served = owner.servedVault {
            if let memoryOnly = owner.memoryOnlyItemCount(), memoryOnly > 0 {
                return
                    "keychain serve of another vault (\(served.path), \(process)) keeps org.freedesktop.secrets: it holds \(memoryOnly) item(s) in its memory-only session collection, which would end with it. The next call after it stops starts keychain serve (keychain serve --replace takes the name now, ending them)"
            }
            // keychain serve lets another take its name (and then stops): the items it served stay in its vault.
            switch start(installed, context, ["--replace"]) {
            case .owns(let pid):
                return
                    "the session bus read the files again; keychain serve (process \(pid)) took org.freedesktop.secrets from keychain serve of another vault (\(served.path), \(process)), which stopped: the next call reaches this vault (the other vault's items stay in it)"
            case .waiting(let pid):
                try? SystemCall.kill(pid, SIGTERM)
                return "keychain serve of another vault (\(served.path), \(process)) kept org.freedesktop.secrets: stop it, and the next call starts keychain serve"
            case .failed(let why):
                return
                    "keychain serve of another vault (\(served.path), \(process)) still owns org.freedesktop.secrets, and keychain serve --replace did not take it (\(why)): stop it, and the next call starts keychain serve"
            }
        }
        return
            "another provider (\(owner.program.rawValue), \(process)) owns org.freedesktop.secrets and does not let another take it: it answers every call until it stops. keychain migrate --foreign --from secret-service --to vault --switch moves its items and hands the name to keychain serve with none left behind; by hand: move its items first, stop it (gnome-keyring: systemctl --user stop gnome-keyring-daemon.service gnome-keyring-daemon.socket, or end gnome-keyring-daemon), and the next call starts keychain serve"
    }

    /// Where a `keychain serve` started by ``start(_:_:_:)`` stands.
    enum Started {
        /// It owns the name (its process id).
        case owns(pid_t)
        /// It waits in the bus's queue for the name.
        case waiting(pid_t)
        /// It did not start, or ended: why.
        case failed(String)
    }

    /// How long a started `keychain serve` may take to own the name or join its queue.
    static let startLimit: Duration = .seconds(15)

    /// Starts the installed `keychain serve` with `options` (`--replace`, `--queue`) in a
    /// session of its own, stopping when idle as one the bus starts does, and waits until
    /// the bus shows it owning the name or waiting for it.
    static func start(_ installed: Installed, _ context: Context, _ options: [String]) -> Started {
        var environment = context.environment
        environment["SECRET_SERVICE_BUS_NAME"] = nil
        let arguments = installed.command + ["--idle-exit", String(installed.idleExit ?? ServeCommand.defaultIdleExit)] + options
        guard let pid = ChildProcess.start(arguments, environment: environment, quiet: true, newSession: true) else {
            return .failed("\(installed.command[0]) could not be started")
        }
        let deadline = ContinuousClock.now + startLimit
        while ContinuousClock.now < deadline {
            if let status = try? SystemCall.waitpidIfEnded(pid) {
                return .failed("it ended with status \((status >> 8) & 0xFF)")
            }
            if let owner = try? SecretServiceOwner.current(), owner.processID == pid { return .owns(pid) }
            if let waiting = try? SecretServiceOwner.waiting(), waiting.contains(where: { $0.processID == pid }) { return .waiting(pid) }
            pause()
        }
        stop(pid)
        return .failed("it neither took the name nor waited for it within \(startLimit.components.seconds) s")
    }

    /// Ends a `keychain serve` this command started, and reaps it.
    static func stop(_ pid: pid_t) {
        try? SystemCall.kill(pid, SIGTERM)
        _ = try? SystemCall.waitpid(pid)
    }

    /// A short wait between two questions to the bus.
    static func pause() {
        var none: [pollfd] = []
        _ = try? SystemCall.poll(&none, milliseconds: 50)
    }
}
